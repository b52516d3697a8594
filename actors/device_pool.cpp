#include "actors/device_pool.hpp"

#include <algorithm>
#include <thread>

#include "actors/device_pool_state.hpp"
#include "actors/protocol/error.hpp"
#include "devices/rng.hpp"
#include "devices/sha256.hpp"

namespace eat::pool_detail {

// -- answers -----------------------------------------------------------------

eval_result failed_result(
  const pool_job& job, eval_status status, std::string detail) {
  eval_result r;
  r.candidate = job.cand.id;
  r.seed = job.seed;
  r.source_hash = devices::sha256_hex(job.cand.source);
  r.status = status;
  r.detail = std::move(detail);
  return r;
}

/// Answers the team and forgets the job.
void answer(device_pool_pointer self, uint64_t id, eval_result r) {
  auto& st = self->state;
  auto i = st.jobs.find(id);
  if (i == st.jobs.end())
    return;
  if (r.status == eval_status::passed) {
    auto& best = st.best[i->second.task.name];
    best = std::max(best, r.geomean_speedup);
  }
  i->second.promise.deliver(std::move(r));
  st.jobs.erase(i);
}

void fail(device_pool_pointer self, uint64_t id, eval_status status,
  std::string detail) {
  auto i = self->state.jobs.find(id);
  if (i != self->state.jobs.end())
    answer(self, id, failed_result(i->second, status, std::move(detail)));
}

// -- devices -----------------------------------------------------------------

bool healthy(const pool_slot& s) {
  return !s.drained;
}

bool free_slot(const pool_slot& s) {
  return !s.drained && !s.busy && !s.checking && !s.suspect;
}

size_t healthy_count(const device_pool_state& st, const std::string& kind) {
  return std::count_if(st.slots.begin(), st.slots.end(), [&](auto& s) {
    return s.kind == kind && healthy(s);
  });
}

/// Why the last device of `kind` was drained.
std::string drained_why(const device_pool_state& st, const std::string& kind) {
  std::string why;
  for (const auto& s : st.slots)
    if (s.kind == kind && s.drained)
      why = s.id + ": " + s.why;
  return why;
}

std::string no_healthy(const device_pool_state& st, const std::string& kind) {
  return "no healthy device of kind " + kind + ": " + drained_why(st, kind);
}

/// The kind that runs `task`: its backend, or sim; "" when none exists.
std::string kind_for(const device_pool_state& st, const task_spec& task) {
  auto has = [&](const std::string& kind) {
    return std::any_of(st.slots.begin(), st.slots.end(), [&](auto& s) {
      return s.kind == kind;
    });
  };
  if (has(task.backend))
    return task.backend;
  return has("sim") ? "sim" : "";
}

} // namespace eat::pool_detail

namespace eat {

using namespace pool_detail;

std::string drain_notice(const std::string& device, const std::string& why,
  const std::string& kind, size_t left) {
  auto head = "device " + device + " drained: " + why + "; ";
  if (left == 0)
    return head + "no " + kind + " device is left: its kind's work fails";
  return head + std::to_string(left) + " " + kind + " device"
         + (left == 1 ? "" : "s") + " left take" + (left == 1 ? "s" : "")
         + " its work";
}

namespace {

// -- compile stage -----------------------------------------------------------

/// Jobs of `kind` compiling or compiled but not yet running.
size_t ahead_of(const device_pool_state& st, const std::string& kind) {
  return std::count_if(st.jobs.begin(), st.jobs.end(), [&](auto& kv) {
    const auto& j = kv.second;
    return j.kind == kind && !j.reverifying
           && (j.phase == job_phase::compiling || j.phase == job_phase::ready);
  });
}

size_t compile_slot(const device_pool_state& st, const std::string& kind) {
  for (size_t i = 0; i < st.slots.size(); ++i)
    if (st.slots[i].kind == kind && healthy(st.slots[i]))
      return i;
  return no_slot;
}

void on_compiled(device_pool_pointer self, uint64_t id, size_t worker,
  prepared_objects objects) {
  auto& st = self->state;
  st.worker_busy[worker] = false;
  auto i = st.jobs.find(id);
  if (i != st.jobs.end()) {
    auto& job = i->second;
    if (objects.status != eval_status::passed) {
      // Never occupies a device: answered with the compiler's verdict.
      auto r = failed_result(job, objects.status, objects.detail);
      r.build_log = std::move(objects.build_log);
      r.compile_s = objects.seconds;
      answer(self, id, std::move(r));
    } else if (healthy_count(st, job.kind) == 0) {
      fail(self, id, eval_status::runtime_error, no_healthy(st, job.kind));
    } else {
      job.objects = std::move(objects);
      job.phase = job_phase::ready;
      st.ready_queue.push(job.cand.team, id);
    }
  }
  pump(self);
}

void start_compile(device_pool_pointer self, size_t worker, uint64_t id) {
  auto& st = self->state;
  auto& job = st.jobs.at(id);
  job.phase = job_phase::compiling;
  st.worker_busy[worker] = true;
  auto index = static_cast<uint32_t>(compile_slot(st, job.kind));
  self
    ->request(st.workers[worker], caf::infinite, compile_atom_v, index,
      job.task, job.cand)
    .then(
      [=](prepared_objects& objects) {
        on_compiled(self, id, worker, std::move(objects));
      },
      [=](caf::error& err) {
        prepared_objects objects;
        objects.status = eval_status::runtime_error;
        objects.detail = "compile worker failed: " + render(err);
        on_compiled(self, id, worker, std::move(objects));
      });
}

} // namespace

void pool_detail::pump_compiles(device_pool_pointer self) {
  auto& st = self->state;
  // Room per kind: how many more jobs may compile ahead of its devices.
  std::map<std::string, size_t> room;
  for (const auto& s : st.slots)
    if (!room.count(s.kind)) {
      auto limit = st.opts.ahead * healthy_count(st, s.kind);
      auto used = ahead_of(st, s.kind);
      room[s.kind] = limit > used ? limit - used : 0;
    }
  for (size_t w = 0; w < st.workers.size(); ++w) {
    if (st.worker_busy[w])
      continue;
    auto id = st.compile_queue.pop([&](uint64_t job) {
      return room[st.jobs.at(job).kind] > 0;
    });
    if (!id)
      return;
    room[st.jobs.at(*id).kind] -= 1;
    start_compile(self, w, *id);
  }
}

namespace {

// -- requests ----------------------------------------------------------------

caf::result<eval_result> on_evaluate(
  device_pool_pointer self, task_spec task, candidate c, uint64_t seed) {
  auto& st = self->state;
  pool_job job;
  job.kind = kind_for(st, task);
  job.task = std::move(task);
  job.cand = std::move(c);
  job.seed = seed;
  if (job.kind.empty())
    return failed_result(job, eval_status::rejected,
      "no device of kind " + job.task.backend + " in this run");
  if (healthy_count(st, job.kind) == 0)
    return failed_result(
      job, eval_status::runtime_error, no_healthy(st, job.kind));
  auto id = st.next_job++;
  job.promise = self->make_response_promise<eval_result>();
  auto promise = job.promise;
  st.compile_queue.push(job.cand.team, id);
  st.jobs.emplace(id, std::move(job));
  pump(self);
  return promise;
}

device_load load_of(const pool_slot& s) {
  device_load d;
  d.device = s.id;
  d.kind = s.kind;
  d.evaluations = s.evaluations;
  d.busy_s = s.busy_s;
  if (s.started) {
    auto end = s.busy ? pool_clock::now() : s.last_answer;
    d.wall_s = std::chrono::duration<double>(end - s.first_dispatch).count();
    if (s.busy)
      d.busy_s += std::chrono::duration<double>(end - s.run_start).count();
  }
  d.failed_checks = s.failed_checks;
  d.drained = s.drained;
  d.why = s.why;
  return d;
}

pool_status status_of(const device_pool_state& st) {
  pool_status out;
  for (const auto& [id, job] : st.jobs)
    if (!job.reverifying && job.phase != job_phase::running)
      out.queued[job.cand.team] += 1;
  out.reverifications = st.ready_queue.priority_size();
  for (const auto& s : st.slots)
    out.devices.push_back(load_of(s));
  return out;
}

void shut_down(device_pool_pointer self, const caf::error& reason) {
  auto& st = self->state;
  for (auto& [id, job] : st.jobs)
    job.promise.deliver(
      make_error(error::run_stopped, "the device pool stopped"));
  st.jobs.clear();
  for (auto& w : st.workers)
    self->send_exit(w, reason);
  for (auto& s : st.slots)
    self->send_exit(s.actor, reason);
  self->quit(reason);
}

void init(device_pool_pointer self, std::vector<pool_member>& members) {
  auto& st = self->state;
  std::vector<std::shared_ptr<devices::device>> devs;
  for (auto& m : members) {
    pool_slot s;
    s.id = m.device->id();
    s.kind = m.device->caps().kind;
    s.actor = std::move(m.actor);
    st.slots.push_back(std::move(s));
    devs.push_back(std::move(m.device));
  }
  auto n = st.opts.compile_workers;
  if (n == 0)
    n = std::max(1u, std::thread::hardware_concurrency() - 1);
  for (uint32_t i = 0; i < n; ++i)
    st.workers.push_back(
      self->spawn<caf::detached>(compile_worker, devs, st.opts.compile_cores));
  st.worker_busy.assign(n, false);
  // Every device proves itself healthy before its first slice.
  for (size_t i = 0; i < st.slots.size(); ++i)
    check_health(self, i);
}

} // namespace

device_pool_actor::behavior_type device_pool(device_pool_pointer self,
  std::vector<pool_member> members, pool_options opts) {
  self->state.opts = opts;
  init(self, members);
  self->set_exit_handler([=](const caf::exit_msg& msg) {
    shut_down(self, msg.reason);
  });
  return {
    [=](evaluate_atom, task_spec& task, candidate& c, uint64_t seed) {
      return on_evaluate(self, std::move(task), std::move(c), seed);
    },
    [=](weight_atom, const std::string& team, double weight) {
      self->state.compile_queue.set_weight(team, weight);
      self->state.ready_queue.set_weight(team, weight);
    },
    [=](status_atom) {
      return status_of(self->state);
    },
  };
}

device_pool_actor spawn_device_pool(
  caf::actor_system& sys, std::vector<pool_member> members, pool_options opts) {
  return sys.spawn(device_pool, std::move(members), opts);
}

device_pool_actor spawn_device_pool(caf::actor_system& sys,
  std::vector<std::shared_ptr<devices::device>> devs, pool_options opts) {
  std::vector<pool_member> members;
  for (auto& d : devs)
    members.push_back({d, sys.spawn<caf::detached>(device_server, d)});
  return spawn_device_pool(sys, std::move(members), opts);
}

uint64_t reverify_seed(uint64_t seed) {
  return devices::derive_seed(seed, 0x7265766572696679ull); // "reverify"
}

} // namespace eat