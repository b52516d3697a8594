#include <algorithm>
#include <cstdio>

#include "actors/device_pool_state.hpp"
#include "actors/protocol/error.hpp"

namespace eat::pool_detail {

namespace {

void drain(device_pool_pointer self, size_t slot, std::string why);

// -- timed stage -------------------------------------------------------------

bool needs_reverify(
  const device_pool_state& st, const pool_job& job, const eval_result& r) {
  if (r.status != eval_status::passed)
    return false;
  if (r.geomean_speedup > st.opts.reverify_baseline)
    return true;
  auto best = st.best.find(job.task.name);
  auto current = best == st.best.end() ? 1.0 : std::max(best->second, 1.0);
  return r.geomean_speedup > st.opts.reverify_factor * current;
}

std::string speedup_text(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2fx", x);
  return buf;
}

/// Whether re-run `r` confirms the job's first result: it passed, at most
/// the tolerance slower. A faster re-run confirms it too: the first result
/// claims no more than the kernel reached again.
bool agrees(
  const pool_options& opts, const pool_job& job, const eval_result& r) {
  auto a = job.first.geomean_speedup;
  auto b = r.geomean_speedup;
  auto tolerance = job.kind == "cpu" ? opts.reverify_tolerance_cpu
                                     : opts.reverify_tolerance;
  return r.status == eval_status::passed && a > 0 && b > 0
         && a / b <= tolerance;
}

/// The team's answer once the re-runs are in: the first result stands
/// when the last re-run agrees with it.
eval_result conclude(
  const pool_options& opts, pool_job& job, const eval_result& last) {
  auto a = job.first.geomean_speedup;
  auto b = last.geomean_speedup;
  auto agree = agrees(opts, job, last);
  auto r = std::move(job.first);
  if (agree) {
    r.method += job.tie_break ? "; not reproduced in a fresh process ("
                                  + speedup_text(job.second.geomean_speedup)
                                  + "), then re-verified in another with seed "
                              : "; re-verified in a fresh process with seed ";
    r.method += std::to_string(job.second_seed) + ": " + speedup_text(b);
    return r;
  }
  r.status = eval_status::rejected;
  r.detail
    = "not reproduced in a fresh process: first " + speedup_text(a) + ", then "
      + (job.tie_break ? speedup_text(job.second.geomean_speedup) + " and "
                       : "")
      + speedup_text(b) + " (" + to_string(last.status)
      + (last.detail.empty() ? "" : ": " + last.detail) + ")";
  return r;
}

void on_result(
  device_pool_pointer self, size_t slot, uint64_t id, eval_result r) {
  auto& st = self->state;
  auto i = st.jobs.find(id);
  if (i == st.jobs.end())
    return;
  auto& job = i->second;
  if (job.reverifying && !job.tie_break && r.status == eval_status::passed
      && !agrees(st.opts, job, r)) {
    // A passed re-run that disagrees: on a noisy machine an honest kernel
    // can miss the tolerance once, so another fresh process decides.
    job.tie_break = true;
    job.second = std::move(r);
    job.second_seed = reverify_seed(job.second_seed);
    job.phase = job_phase::ready;
    st.ready_queue.push_priority(id);
    return;
  }
  if (job.reverifying)
    return answer(self, id, conclude(st.opts, job, r));
  if (!needs_reverify(st, job, r))
    return answer(self, id, std::move(r));
  job.reverifying = true;
  job.first = std::move(r);
  job.first_slot = slot;
  job.second_seed = reverify_seed(job.seed);
  job.phase = job_phase::ready;
  st.ready_queue.push_priority(id);
}

void end_slice(device_pool_state& st, size_t slot) {
  auto& s = st.slots[slot];
  auto now = pool_clock::now();
  s.busy = false;
  s.busy_s += std::chrono::duration<double>(now - s.run_start).count();
  s.evaluations += 1;
  s.last_answer = now;
}

void drain(device_pool_pointer self, size_t slot, std::string why);

void on_run_failed(
  device_pool_pointer self, size_t slot, uint64_t id, const caf::error& err) {
  auto& st = self->state;
  auto& s = st.slots[slot];
  auto second = st.jobs.count(id) && st.jobs.at(id).reverifying;
  eval_result r;
  if (err == caf::sec::request_timeout) {
    // The device actor is still blocked in run(): keep it booked until its
    // health answer (queued behind the run) shows it is back.
    s.suspect = true;
    r.status = eval_status::timeout;
    r.detail = "no answer from " + s.id + " within the slice deadline of "
               + std::to_string(st.opts.slice_timeout_s) + " s";
    check_health(self, slot);
  } else {
    end_slice(st, slot);
    r.status = eval_status::runtime_error;
    r.detail = s.id + " failed: " + render(err);
    drain(self, slot, "device actor failed: " + render(err));
  }
  if (second)
    on_result(self, slot, id, std::move(r));
  else
    fail(self, id, r.status, r.detail);
  pump(self);
}

void start_run(device_pool_pointer self, size_t slot, uint64_t id) {
  auto& st = self->state;
  auto& s = st.slots[slot];
  auto& job = st.jobs.at(id);
  job.phase = job_phase::running;
  s.busy = true;
  s.job = id;
  s.run_start = pool_clock::now();
  if (!s.started) {
    s.started = true;
    s.first_dispatch = s.run_start;
  }
  auto seed = job.reverifying ? job.second_seed : job.seed;
  auto timeout = std::chrono::duration_cast<caf::timespan>(
    std::chrono::duration<double>(st.opts.slice_timeout_s));
  self
    ->request(
      s.actor, timeout, run_atom_v, job.task, job.cand, job.objects, seed)
    .then(
      [=](eval_result& r) {
        end_slice(self->state, slot);
        on_result(self, slot, id, std::move(r));
        check_health(self, slot);
      },
      [=](caf::error& err) {
        on_run_failed(self, slot, id, err);
      });
}

/// Whether `slot` may take `id` now: same kind, and a re-verification goes
/// to another device than its first run when a healthy one exists.
bool fits(const device_pool_state& st, size_t slot, uint64_t id) {
  const auto& job = st.jobs.at(id);
  const auto& s = st.slots[slot];
  if (job.kind != s.kind)
    return false;
  if (!job.reverifying || job.first_slot != slot)
    return true;
  return healthy_count(st, s.kind) < 2;
}

void pump_runs(device_pool_pointer self) {
  auto& st = self->state;
  for (size_t i = 0; i < st.slots.size(); ++i) {
    if (!free_slot(st.slots[i]))
      continue;
    auto id = st.ready_queue.pop([&](uint64_t job) {
      return fits(st, i, job);
    });
    if (id)
      start_run(self, i, *id);
  }
}

} // namespace

void pump(device_pool_pointer self) {
  pump_runs(self);
  pump_compiles(self);
}

namespace {

// -- health ------------------------------------------------------------------

/// Answers every job of `kind` that no device is running.
void fail_kind(device_pool_pointer self, const std::string& kind) {
  auto& st = self->state;
  std::vector<uint64_t> doomed;
  for (const auto& [id, job] : st.jobs)
    if (job.kind == kind && job.phase != job_phase::running
        && job.phase != job_phase::compiling)
      doomed.push_back(id);
  auto why = no_healthy(st, kind);
  for (auto id : doomed) {
    st.compile_queue.remove(id);
    st.ready_queue.remove(id);
    fail(self, id, eval_status::runtime_error, why);
  }
}

void drain(device_pool_pointer self, size_t slot, std::string why) {
  auto& st = self->state;
  auto& s = st.slots[slot];
  if (s.drained)
    return;
  s.drained = true;
  s.why = std::move(why);
  auto left = healthy_count(st, s.kind);
  if (st.opts.listener)
    self->send(st.opts.listener, restructure_atom_v,
      drain_notice(s.id, s.why, s.kind, left) + "\n");
  // Work waits per kind, not per device: it moves to the other devices of
  // the kind by itself. With none left, nobody can run it.
  if (left == 0)
    fail_kind(self, s.kind);
}

void on_health(device_pool_pointer self, size_t slot, std::string why) {
  auto& st = self->state;
  auto& s = st.slots[slot];
  s.checking = false;
  if (s.suspect) {
    // The timed-out run has ended: the device is ours again.
    s.suspect = false;
    end_slice(st, slot);
  }
  if (why.empty()) {
    s.failed_checks = 0;
  } else if (++s.failed_checks >= st.opts.drain_after) {
    drain(self, slot, std::move(why));
  } else {
    return check_health(self, slot);
  }
  pump(self);
}

} // namespace

void check_health(device_pool_pointer self, size_t slot) {
  auto& s = self->state.slots[slot];
  s.checking = true;
  self->request(s.actor, caf::infinite, health_atom_v)
    .then(
      [=](std::string& why) {
        on_health(self, slot, std::move(why));
      },
      [=](caf::error& err) {
        on_health(self, slot, "health check failed: " + render(err));
      });
}

} // namespace eat::pool_detail
