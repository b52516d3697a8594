#include "persistence/file_tree.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "actors/protocol/error.hpp"
#include "actors/protocol/wire.hpp"
#include "persistence/event_log.hpp"
#include "persistence/fs_path.hpp"

namespace eat::persistence {

namespace {

using entry = cursor::entry;
using maybe_entry = caf::expected<std::optional<entry>>;

caf::error invalid(std::string what) {
  return make_error(error::invalid_arguments, std::move(what));
}

std::string file_name(std::string_view path, uint64_t version) {
  return "file " + quote_fs_path(path) + " version " + std::to_string(version);
}

/// A decoded record of the files database; `path` points into the txn.
struct record {
  std::string_view path;
  file_version v;
};

caf::expected<file_key> parse_key(const txn& t, std::string_view key) {
  if (auto k = decode_file_key(key))
    return *k;
  return make_error(error::store_failure,
    "files database in store at " + std::string{t.dir()} + " has a malformed "
      + "key " + quote_fs_path(key) + ": expected path, NUL, 8-byte version");
}

caf::expected<record> decode_record(const txn& t, const entry& e) {
  auto k = parse_key(t, e.first);
  if (!k)
    return k.error();
  auto where = [&] {
    return file_name(k->path, k->version) + " in store at "
           + std::string{t.dir()};
  };
  auto v = wire::decode<file_version>(e.second);
  if (!v)
    return make_error(error::store_failure,
      where() + " cannot be decoded (" + render(v.error()) + ")");
  if (v->version != k->version)
    return make_error(error::store_failure,
      where() + " records version " + std::to_string(v->version));
  return record{k->path, std::move(*v)};
}

/// Moves `c` to the first record whose key starts with `prefix`; nullopt
/// when there is none.
maybe_entry first_with_prefix(cursor& c, std::string_view prefix) {
  auto rec = c.seek(prefix);
  if (!rec || !*rec || (*rec)->first.starts_with(prefix))
    return rec;
  return std::optional<entry>{};
}

/// The versions of one path, as a cursor walked over them.
struct path_run {
  /// The key of the latest version.
  file_key key;
  entry last;
  /// The first record of the next path, if any; the cursor stands on it.
  std::optional<entry> after;
};

/// Walks from `first` over the versions of its path.
caf::expected<path_run> walk_path(const txn& t, cursor& c, entry first) {
  auto k = parse_key(t, first.first);
  if (!k)
    return k.error();
  path_run run{*k, first, std::nullopt};
  for (;;) {
    auto rec = c.next();
    if (!rec)
      return rec.error();
    if (!*rec)
      return run;
    auto next = parse_key(t, (*rec)->first);
    if (!next)
      return next.error();
    if (next->path != run.key.path) {
      run.after = *rec;
      return run;
    }
    run.key = *next;
    run.last = **rec;
  }
}

/// Returns the latest version of `path` in `t`, or nullopt.
caf::expected<std::optional<file_version>> latest_in(
  txn& t, MDB_dbi files, std::string_view path) {
  auto c = t.open_cursor(files);
  if (!c)
    return c.error();
  auto first = first_with_prefix(*c, file_key_prefix(path));
  if (!first)
    return first.error();
  if (!*first)
    return std::optional<file_version>{};
  auto run = walk_path(t, *c, **first);
  if (!run)
    return run.error();
  auto rec = decode_record(t, run->last);
  if (!rec)
    return rec.error();
  return std::optional<file_version>{std::move(rec->v)};
}

/// Returns `version` of `path` in `t`, or nullopt.
caf::expected<std::optional<file_version>> version_in(
  txn& t, MDB_dbi files, std::string_view path, uint64_t version) {
  auto key = encode_file_key(path, version);
  auto value = t.get(files, key);
  if (!value)
    return value.error();
  if (!*value)
    return std::optional<file_version>{};
  auto rec = decode_record(t, entry{key, **value});
  if (!rec)
    return rec.error();
  return std::optional<file_version>{std::move(rec->v)};
}

/// True when some key of `t` starts with `prefix`.
caf::expected<bool> has_prefix(txn& t, MDB_dbi files, std::string_view prefix) {
  auto c = t.open_cursor(files);
  if (!c)
    return c.error();
  auto rec = first_with_prefix(*c, prefix);
  if (!rec)
    return rec.error();
  return rec->has_value();
}

std::string dir_prefix(std::string_view dir) {
  return dir == "/" ? std::string{"/"} : std::string{dir} + "/";
}

/// Refuses to make `path` a file when it is a directory or under a file.
caf::expected<void> check_writable(
  txn& t, MDB_dbi files, std::string_view path) {
  for (auto slash = path.find('/', 1); slash != std::string_view::npos;
       slash = path.find('/', slash + 1)) {
    auto parent = path.substr(0, slash);
    auto is_file = has_prefix(t, files, file_key_prefix(parent));
    if (!is_file)
      return is_file.error();
    if (*is_file)
      return invalid("cannot write " + quote_fs_path(path) + ": "
                     + quote_fs_path(parent) + " is a file");
  }
  auto is_dir = has_prefix(t, files, dir_prefix(path));
  if (!is_dir)
    return is_dir.error();
  if (*is_dir)
    return invalid("cannot write " + quote_fs_path(path)
                   + ": it is a directory with files under it");
  return caf::unit;
}

/// The error for a `version` (0: any) of `path` that is not in `t`.
caf::error missing_file(
  txn& t, MDB_dbi files, std::string_view path, uint64_t version) {
  auto is_dir = has_prefix(t, files, dir_prefix(path));
  if (!is_dir)
    return is_dir.error();
  if (*is_dir)
    return invalid(quote_fs_path(path) + " is a directory, not a file");
  auto latest = latest_in(t, files, path);
  if (!latest)
    return latest.error();
  if (!*latest)
    return invalid("no file " + quote_fs_path(path) + " in the namespace");
  return invalid("file " + quote_fs_path(path) + " has no version "
                 + std::to_string(version) + " (its latest is "
                 + std::to_string((*latest)->version) + ")");
}

/// The error for a directory `dir` that has no files under it.
caf::error missing_dir(txn& t, MDB_dbi files, std::string_view dir) {
  auto is_file = has_prefix(t, files, file_key_prefix(dir));
  if (!is_file)
    return is_file.error();
  if (*is_file)
    return invalid(quote_fs_path(dir) + " is a file, not a directory");
  return invalid("no directory " + quote_fs_path(dir) + " in the namespace");
}

/// Returns the bytes of version `v` of `path`, checking blob and size.
caf::expected<std::string> bytes_of(txn& t, const blob_store& blobs,
  std::string_view path, const file_version& v) {
  auto bytes = blobs.get_in(t, v.blob);
  if (!bytes)
    return bytes.error();
  auto where = "blob " + v.blob + " of " + file_name(path, v.version);
  if (!*bytes)
    return make_error(error::store_failure,
      where + " is missing from store at " + std::string{t.dir()});
  if ((*bytes)->size() != v.size)
    return make_error(error::store_failure,
      where + " has " + std::to_string((*bytes)->size())
        + " bytes, its record says " + std::to_string(v.size));
  // LMDB keeps no checksums: bytes damaged on disk would be read back as
  // the file's (a kernel, a learning document) without this.
  if (blob_hash(**bytes) != v.blob)
    return make_error(error::store_failure,
      where
        + " does not hash to its name: the store is damaged (eat fsck "
          "lists every problem)");
  return std::string{**bytes};
}

/// Checks a file path for the store: normalised, not the root, short enough.
caf::expected<std::string> file_path(std::string_view path) {
  auto p = normalize_fs_path(path);
  if (!p)
    return p.error();
  if (*p == "/")
    return invalid("path '/' is the root directory, not a file");
  if (p->size() > max_stored_path)
    return invalid("path " + quote_fs_path(p->substr(0, 64)) + "... has "
                   + std::to_string(p->size())
                   + " bytes: the store keeps paths of at most "
                   + std::to_string(max_stored_path) + " bytes");
  return p;
}

/// Returns the entries of the directory whose key prefix is `prefix`.
caf::expected<std::vector<dir_entry>> list_in(
  txn& t, cursor& c, const std::string& prefix) {
  std::vector<dir_entry> out;
  for (auto rec = first_with_prefix(c, prefix);;) {
    if (!rec)
      return rec.error();
    if (!*rec || !(*rec)->first.starts_with(prefix))
      return out;
    auto k = parse_key(t, (*rec)->first);
    if (!k)
      return k.error();
    auto rest = k->path.substr(prefix.size());
    if (auto slash = rest.find('/'); slash != std::string_view::npos) {
      auto name = std::string{rest.substr(0, slash)};
      out.push_back(dir_entry{name, true, 0, 0});
      rec = c.seek(prefix + name + '0'); // '0' follows '/': skips the subtree
      continue;
    }
    auto run = walk_path(t, c, **rec);
    if (!run)
      return run.error();
    auto last = decode_record(t, run->last);
    if (!last)
      return last.error();
    out.push_back(
      dir_entry{std::string{rest}, false, last->v.version, last->v.size});
    rec = run->after;
  }
}

/// Hashes of the blobs verify() has checked, to what they hash to (empty:
/// missing).
using checked_blobs = std::map<std::string, std::string, std::less<>>;

/// Returns the problem of version `r` (empty when there is none).
caf::expected<std::string> check_version(
  txn& t, const blob_store& blobs, const record& r, checked_blobs& checked) {
  auto where = file_name(r.path, r.v.version) + ": blob " + r.v.blob;
  auto bytes = blobs.get_in(t, r.v.blob);
  if (!bytes) {
    if (code_of(bytes.error()) == error::invalid_arguments)
      return where + " is not a SHA-256 hex digest";
    return bytes.error();
  }
  if (!*bytes)
    return where + " is missing";
  if ((*bytes)->size() != r.v.size)
    return where + " has " + std::to_string((*bytes)->size())
           + " bytes, the file version records " + std::to_string(r.v.size);
  auto known = checked.find(r.v.blob);
  if (known == checked.end())
    known = checked.emplace(r.v.blob, blob_hash(**bytes)).first;
  if (known->second != r.v.blob)
    return where + " holds bytes whose SHA-256 is " + known->second;
  return std::string{};
}

} // namespace

file_tree::clock_fn file_tree::default_clock() {
  return system_clock_ms;
}

file_tree::file_tree(store& s, clock_fn clock)
  : store_(s), blobs_(s), clock_(std::move(clock)) {
  // nop
}

caf::expected<uint64_t> file_tree::put(
  std::string_view path, std::string_view bytes, std::string_view author) {
  return store_.update([&](txn& t) {
    return put_in(t, path, bytes, author);
  });
}

caf::expected<uint64_t> file_tree::put_in(txn& t, std::string_view path,
  std::string_view bytes, std::string_view author) {
  auto p = file_path(path);
  if (!p)
    return p.error();
  auto files = store_.handle(db::files);
  if (auto ok = check_writable(t, files, *p); !ok)
    return ok.error();
  auto latest = latest_in(t, files, *p);
  if (!latest)
    return latest.error();
  auto hash = blobs_.put_in(t, bytes);
  if (!hash)
    return hash.error();
  file_version v{*latest ? (*latest)->version + 1 : 1, std::move(*hash),
    bytes.size(), clock_(), std::string{author}};
  auto put = t.put(files, encode_file_key(*p, v.version), wire::encode(v));
  if (!put)
    return put.error();
  return v.version;
}

caf::expected<std::string> file_tree::get(
  std::string_view path, uint64_t version) const {
  auto p = file_path(path);
  if (!p)
    return p.error();
  auto files = store_.handle(db::files);
  return store_.view([&](txn& t) -> caf::expected<std::string> {
    auto v = version == 0 ? latest_in(t, files, *p)
                          : version_in(t, files, *p, version);
    if (!v)
      return v.error();
    if (!*v)
      return missing_file(t, files, *p, version);
    return bytes_of(t, blobs_, *p, **v);
  });
}

caf::expected<std::vector<file_version>> file_tree::log(
  std::string_view path) const {
  using result_type = caf::expected<std::vector<file_version>>;
  auto p = file_path(path);
  if (!p)
    return p.error();
  auto files = store_.handle(db::files);
  return store_.view([&](txn& t) -> result_type {
    auto c = t.open_cursor(files);
    if (!c)
      return c.error();
    std::vector<file_version> out;
    auto prefix = file_key_prefix(*p);
    for (auto rec = first_with_prefix(*c, prefix);; rec = c->next()) {
      if (!rec)
        return rec.error();
      if (!*rec || !(*rec)->first.starts_with(prefix))
        break;
      auto r = decode_record(t, **rec);
      if (!r)
        return r.error();
      out.push_back(std::move(r->v));
    }
    if (out.empty())
      return missing_file(t, files, *p, 0);
    return out;
  });
}

caf::expected<std::vector<dir_entry>> file_tree::list(
  std::string_view dir) const {
  using result_type = caf::expected<std::vector<dir_entry>>;
  auto d = normalize_fs_path(dir);
  if (!d)
    return d.error();
  auto files = store_.handle(db::files);
  return store_.view([&](txn& t) -> result_type {
    auto c = t.open_cursor(files);
    if (!c)
      return c.error();
    auto entries = list_in(t, *c, dir_prefix(*d));
    if (!entries)
      return entries.error();
    if (entries->empty() && *d != "/")
      return missing_dir(t, files, *d);
    std::sort(entries->begin(), entries->end(),
      [](const dir_entry& x, const dir_entry& y) {
        return x.name < y.name;
      });
    return entries;
  });
}

caf::expected<std::vector<std::pair<std::string, file_version>>>
file_tree::all() const {
  using result_type
    = caf::expected<std::vector<std::pair<std::string, file_version>>>;
  auto files = store_.handle(db::files);
  return store_.view([&](txn& t) -> result_type {
    auto c = t.open_cursor(files);
    if (!c)
      return c.error();
    std::vector<std::pair<std::string, file_version>> out;
    // Keys compare as bytes and paths hold no NUL, so key order is path
    // order. A one-byte NUL key sorts before every key.
    for (auto rec = c->seek(std::string_view{"\0", 1});;) {
      if (!rec)
        return rec.error();
      if (!*rec)
        return out;
      auto run = walk_path(t, *c, **rec);
      if (!run)
        return run.error();
      auto last = decode_record(t, run->last);
      if (!last)
        return last.error();
      out.emplace_back(std::string{last->path}, std::move(last->v));
      rec = run->after;
    }
  });
}

caf::expected<std::vector<std::string>> file_tree::verify() const {
  using result_type = caf::expected<std::vector<std::string>>;
  auto files = store_.handle(db::files);
  return store_.view([&](txn& t) -> result_type {
    auto c = t.open_cursor(files);
    if (!c)
      return c.error();
    std::vector<std::string> problems;
    checked_blobs checked;
    for (auto rec = c->seek(std::string_view{"\0", 1});; rec = c->next()) {
      if (!rec)
        return rec.error();
      if (!*rec)
        return problems;
      auto r = decode_record(t, **rec);
      if (!r) {
        problems.push_back(render(r.error()));
        continue;
      }
      auto problem = check_version(t, blobs_, *r, checked);
      if (!problem)
        return problem.error();
      if (!problem->empty())
        problems.push_back(std::move(*problem));
    }
  });
}

} // namespace eat::persistence
