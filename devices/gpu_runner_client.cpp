#include "devices/gpu_runner_client.hpp"

#include "actors/protocol/wire.hpp"

namespace eat::devices {

caf::expected<gpu_runner_outcome> run_gpu_runner_bytes(
  const runner_launch& launch, const std::string& request, uint64_t nonce) {
  auto run = run_runner_bytes(launch, request, nonce, "gpu-run.");
  if (!run)
    return std::move(run.error());
  gpu_runner_outcome out;
  out.common = std::move(run->outcome);
  if (out.common.reply) {
    auto full = wire::decode<gpu_runner_reply>(run->reply_bytes);
    if (full)
      out.reply = std::move(*full);
    else
      out.common = runner_outcome{std::nullopt, eval_status::runtime_error,
        "malformed reply: " + render(full.error()), out.common.seconds};
  }
  return out;
}

caf::expected<gpu_runner_outcome> run_gpu_runner(
  const runner_launch& launch, const gpu_runner_request& req) {
  return run_gpu_runner_bytes(launch, wire::encode(req), req.nonce);
}

} // namespace eat::devices
