#include "tests/devices/cuda_on_cpu.hpp"

#include <cctype>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

namespace eat::devices::test {

namespace {

void replace_all(
  std::string& s, const std::string& from, const std::string& to) {
  for (auto at = s.find(from); at != std::string::npos;
       at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

/// The start of the kernel name (with template arguments) ending at `end`.
size_t kernel_name_start(const std::string& s, size_t end) {
  size_t start = end;
  int depth = 0;
  while (start > 0) {
    char c = s[start - 1];
    if (c == '>') {
      ++depth;
    } else if (c == '<') {
      if (depth == 0)
        break;
      --depth;
    } else if (depth == 0
               && !(std::isalnum(static_cast<unsigned char>(c)) || c == '_'
                    || c == ':')) {
      break;
    }
    --start;
  }
  return start;
}

/// k<<<config>>>(args) -> eat_emu::launcher(config)(k, args)
void rewrite_launches(std::string& s) {
  for (auto at = s.find("<<<"); at != std::string::npos;
       at = s.find("<<<", at)) {
    auto close = s.find(">>>", at);
    auto paren = close == std::string::npos ? close : s.find('(', close);
    if (paren == std::string::npos)
      throw std::runtime_error("cuda_on_cpu: a launch without >>>(");
    auto start = kernel_name_start(s, at);
    auto kernel = s.substr(start, at - start);
    if (kernel.empty())
      throw std::runtime_error("cuda_on_cpu: a launch without a kernel name");
    auto config = s.substr(at + 3, close - at - 3);
    auto rest = s.find_first_not_of(" \t\n", paren + 1);
    bool no_args = rest != std::string::npos && s[rest] == ')';
    auto text
      = "eat_emu::launcher(" + config + ")(" + kernel + (no_args ? "" : ", ");
    s.replace(start, paren + 1 - start, text);
    at = start + text.size();
  }
}

} // namespace

namespace {

/// The text of tests/devices/cuda_on_cpu/prelude.hpp.
std::string prelude() {
  const auto path
    = std::string{EAT_SOURCE_DIR} + "/tests/devices/cuda_on_cpu/prelude.hpp";
  std::ifstream in{path, std::ios::binary};
  if (!in)
    throw std::runtime_error("cuda_on_cpu: cannot read " + path);
  return std::string{std::istreambuf_iterator<char>{in}, {}};
}

/// `source` with `includes` removed and launches rewritten, after `defines`
/// and the prelude; for entry::cpu, the GPU entry renamed and a CPU entry
/// appended.
std::string on_cpu(const std::string& source,
  const std::vector<std::string>& includes, const std::string& defines,
  entry abi) {
  auto body = source;
  for (const auto& header : includes)
    replace_all(body, header, "");
  if (body.find("#include <cuda") != std::string::npos
      || body.find("#include <hip/") != std::string::npos)
    throw std::runtime_error("cuda_on_cpu: a CUDA or HIP header it cannot "
                             "stand in for");
  rewrite_launches(body);
  const auto prelude = defines + devices::test::prelude() + "\n";
  if (abi == entry::gpu)
    return prelude + body;
  const std::string kernel = "extern \"C\" int eat_kernel(";
  const std::string gemm = "extern \"C\" int eat_gemm(";
  if (auto at = body.find(kernel); at != std::string::npos) {
    body.replace(at, kernel.size(), "int eat_gpu_kernel(");
    return prelude + body + R"(
extern "C" void eat_kernel(
    const void* const* inputs, void* const* outputs, const int64_t* axes) {
  if (int rc = eat_gpu_kernel(inputs, outputs, axes, nullptr); rc != 0) {
    std::fprintf(stderr, "cuda_on_cpu: eat_kernel returned %d\n", rc);
    std::abort();
  }
}
)";
  }
  if (auto at = body.find(gemm); at != std::string::npos) {
    body.replace(at, gemm.size(), "int eat_gpu_gemm(");
    return prelude + body + R"(
extern "C" void eat_gemm(const float* a, const float* b, float* c,
    int64_t m, int64_t n, int64_t k) {
  if (int rc = eat_gpu_gemm(a, b, c, m, n, k, nullptr); rc != 0) {
    std::fprintf(stderr, "cuda_on_cpu: eat_gemm returned %d\n", rc);
    std::abort();
  }
}
)";
  }
  throw std::runtime_error(
    "cuda_on_cpu: no extern \"C\" int eat_kernel( or eat_gemm(");
}

} // namespace

std::string cuda_on_cpu(const std::string& cu, entry abi) {
  return on_cpu(cu,
    {"#include <cuda_runtime.h>", "#include <cuda_bf16.h>",
      "#include <cuda_fp16.h>", "#include <mma.h>"},
    "", abi);
}

std::string hip_on_cpu(const std::string& hip, entry abi) {
  return on_cpu(hip,
    {"#include <hip/hip_runtime.h>", "#include <hip/hip_fp16.h>"},
    "#define EAT_EMU_HIP 1\n", abi);
}

} // namespace eat::devices::test
