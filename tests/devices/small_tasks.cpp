#include "tests/devices/small_tasks.hpp"

#include <fstream>

#include <catch2/catch.hpp>

#include "actors/protocol/error.hpp"
#include "runtime/task_file.hpp"

namespace eat::devices::test {

namespace fs = std::filesystem;

task_spec small_task(const std::string& name,
  const std::vector<std::string>& lines, const fs::path& dir) {
  auto file = dir / (name + ".jsonl");
  std::ofstream out{file};
  for (const auto& l : lines)
    out << l << "\n";
  out.close();
  auto task = load_task(
    fs::path{EAT_SOURCE_DIR} / "kernels", name, task_overrides{file});
  if (!task)
    FAIL("cannot load " << name << ": " << render(task.error()));
  return std::move(*task);
}

std::string rmsnorm_line(int batch) {
  return R"({"definition": "rmsnorm_h4096", "workload": {"axes": )"
         R"({"batch_size": )"
         + std::to_string(batch)
         + R"(}, "inputs": {"hidden_states": {"type": "random"}, )"
           R"("weight": {"type": "random"}}}})";
}

std::string decode_line(bool mla, int batch, int tokens) {
  auto n = std::to_string(tokens);
  std::string random = R"({"type": "random"})";
  std::string tensors = mla ? R"("q_nope": )" + random + R"(, "q_pe": )"
                                + random + R"(, "ckv_cache": )" + random
                                + R"(, "kpe_cache": )" + random
                            : R"("q": )" + random + R"(, "k_cache": )" + random
                                + R"(, "v_cache": )" + random;
  std::string scale = mla ? "0.1352337747812271" : "0.08838834764831845";
  return R"({"definition": ")"
         + std::string{mla ? "mla_paged_decode_h16_ckv512_kpe64_ps1"
                           : "gqa_paged_decode_h32_kv4_d128_ps1"}
         + R"(", "workload": {"axes": {"batch_size": )" + std::to_string(batch)
         + R"(, "num_pages": )" + n + R"(, "len_indptr": )"
         + std::to_string(batch + 1) + R"(, "num_kv_indices": )" + n
         + R"(}, "inputs": {)" + tensors + R"(, "kv_indptr": )" + random
         + R"(, "kv_indices": )" + random
         + R"(, "sm_scale": {"type": "scalar", "value": )" + scale + "}}}}";
}

} // namespace eat::devices::test
