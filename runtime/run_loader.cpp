#include "runtime/run_loader.hpp"

#include "actors/protocol/error.hpp"
#include "persistence/event_log.hpp"

namespace eat {

caf::expected<std::shared_ptr<persistence::store>> open_run_store(
  const std::filesystem::path& store_dir, uint64_t map_size_mib,
  bool read_only) {
  persistence::store_options opts;
  if (map_size_mib > 0)
    opts.map_size = map_size_mib << 20;
  opts.read_only = read_only;
  auto st = persistence::store::open(store_dir, opts);
  if (!st)
    return st.error();
  return std::shared_ptr<persistence::store>{std::move(*st)};
}

caf::expected<std::shared_ptr<persistence::store>>
open_run_store_dir(const std::filesystem::path& run_dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(run_dir / "store", ec))
    return make_error(error::invalid_run_dir,
                      "'" + run_dir.string()
                        + "' is not a run directory (it has no store/)");
  return open_run_store(run_dir / "store", 0, true);
}

caf::expected<std::shared_ptr<persistence::run_writer>>
open_run_writer(persistence::store& store) {
  auto writer = persistence::run_writer::open(store);
  if (!writer)
    return writer.error();
  return std::shared_ptr<persistence::run_writer>{std::move(*writer)};
}

caf::expected<uint64_t> commit_event(persistence::run_writer& writer,
                                     event_kind kind, std::string body,
                                     std::vector<file_write> files) {
  event e;
  e.kind = kind;
  e.body = std::move(body);
  auto seqs = writer.commit({std::move(e)}, std::move(files));
  if (!seqs)
    return seqs.error();
  return seqs->front();
}

} // namespace eat
