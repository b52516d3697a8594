#pragma once

// The device pool's test fixture: fake devices whose speedup a candidate
// chooses and whose runs wait at a gate, and a pool over them. Shared by
// the pool's specifications (device_pool_test.cpp,
// device_pool_reverify_test.cpp).

#include <catch2/catch.hpp>

#include <atomic>
#include <climits>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>

#include <sched.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>

#include "actors/device_pool.hpp"
#include "actors/protocol/error.hpp"
#include "runtime/system_setup.hpp"

namespace eat::test {

/// What a fake device records, and its gate; shared with the test.
struct fake_control {
  std::mutex mtx;
  std::condition_variable cv;
  /// run() number n (from 1) waits until n <= allowed.
  int entered = 0;
  int allowed = INT_MAX;
  std::atomic<int> inside{0};
  std::atomic<int> max_inside{0};
  std::atomic<int> prepares{0};
  std::atomic<bool> healthy{true};
  std::vector<uint64_t> seeds;
  /// The cores the thread of the last prepare() could run on.
  std::vector<int> prepare_cores;

  void allow(int n) {
    std::lock_guard<std::mutex> guard{mtx};
    allowed = n;
    cv.notify_all();
  }

  void wait_entered(int n) {
    std::unique_lock<std::mutex> guard{mtx};
    cv.wait(guard, [&] {
      return entered >= n;
    });
  }

  int runs() {
    std::lock_guard<std::mutex> guard{mtx};
    return static_cast<int>(seeds.size());
  }
};

/// Runs per candidate id, across all fake devices of a test.
struct call_book {
  std::mutex mtx;
  std::map<std::string, int> calls;

  int add(const std::string& id) {
    std::lock_guard<std::mutex> guard{mtx};
    return ++calls[id];
  }
};

/// A device of any kind whose speedup a candidate chooses: params "speedup"
/// on its first run, "again" on its second and "third" on later ones
/// ("again" without it; default 1.5).
class fake_device final : public devices::device {
public:
  fake_device(std::string id, std::string kind,
    std::shared_ptr<fake_control> ctl,
    std::shared_ptr<call_book> book = std::make_shared<call_book>())
    : id_(std::move(id)), kind_(std::move(kind)), ctl_(std::move(ctl)),
      book_(std::move(book)) {}

  std::string id() const override {
    return id_;
  }
  std::string description() const override {
    return id_ + ": fake";
  }
  devices::device_caps caps() const override {
    devices::device_caps c;
    c.kind = kind_;
    c.identity = "fake:" + id_;
    return c;
  }

  devices::prepared prepare(
    const task_spec&, const candidate& c) const override {
    ctl_->prepares += 1;
    {
      cpu_set_t set;
      CPU_ZERO(&set);
      ::sched_getaffinity(0, sizeof(set), &set);
      std::lock_guard<std::mutex> guard{ctl_->mtx};
      ctl_->prepare_cores.clear();
      for (int core = 0; core < CPU_SETSIZE; ++core)
        if (CPU_ISSET(core, &set))
          ctl_->prepare_cores.push_back(core);
    }
    devices::prepared out;
    if (c.source.find("#error") != std::string::npos) {
      out.status = eval_status::compile_error;
      out.detail = "does not compile";
      out.build_log = "error: #error";
    }
    return out;
  }

  eval_result run(const task_spec&, const candidate& c,
    const devices::prepared&, uint64_t seed) override {
    auto now = ++ctl_->inside;
    auto seen = ctl_->max_inside.load();
    while (now > seen && !ctl_->max_inside.compare_exchange_weak(seen, now)) {
    }
    auto call = book_->add(c.id);
    {
      std::unique_lock<std::mutex> guard{ctl_->mtx};
      ctl_->seeds.push_back(seed);
      auto n = ++ctl_->entered;
      ctl_->cv.notify_all();
      ctl_->cv.wait(guard, [&] {
        return n <= ctl_->allowed;
      });
    }
    eval_result r;
    r.candidate = c.id;
    r.seed = seed;
    r.status = eval_status::passed;
    r.method = "fake";
    r.device = id_;
    auto key = call == 1 ? "speedup" : call == 2 ? "again" : "third";
    auto i = c.params.find(key);
    if (i == c.params.end() && call > 2)
      i = c.params.find("again");
    r.geomean_speedup = i == c.params.end() ? 1.5 : std::stod(i->second);
    ctl_->inside -= 1;
    return r;
  }

  std::string check_health() override {
    return ctl_->healthy ? "" : id_ + " is on fire";
  }

private:
  std::string id_;
  std::string kind_;
  std::shared_ptr<fake_control> ctl_;
  std::shared_ptr<call_book> book_;
};

inline task_spec cpu_task() {
  task_spec t;
  t.name = "sgemm";
  t.kind = "gemm";
  t.backend = "cpu";
  t.workloads = {{"w", {{"m", 8}}}};
  return t;
}

inline candidate make(std::string id, std::string team, param_map params = {}) {
  candidate c;
  c.id = std::move(id);
  c.team = std::move(team);
  c.task = "sgemm";
  c.family = "custom";
  c.params = std::move(params);
  c.source = "kernel " + c.id;
  return c;
}

struct fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<caf::scoped_actor> self;
  std::vector<std::shared_ptr<fake_control>> ctl;
  device_pool_actor pool;

  fixture() {
    configure_actor_system(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
    self = std::make_unique<caf::scoped_actor>(*sys);
  }

  ~fixture() {
    if (pool && !stopped)
      (*self)->send_exit(pool, caf::exit_reason::user_shutdown);
  }

  bool stopped = false;

  /// A pool over `n` fake devices of `kind`.
  void start(int n, pool_options opts = {}, std::string kind = "cpu") {
    std::vector<std::shared_ptr<devices::device>> devs;
    auto book = std::make_shared<call_book>();
    for (int i = 0; i < n; ++i) {
      ctl.push_back(std::make_shared<fake_control>());
      devs.push_back(std::make_shared<fake_device>(
        "dev" + std::to_string(i), kind, ctl.back(), book));
    }
    start_over(std::move(devs), opts);
  }

  void start_over(
    std::vector<std::shared_ptr<devices::device>> devs, pool_options opts) {
    if (opts.compile_workers == 0)
      opts.compile_workers = 2;
    pool = spawn_device_pool(*sys, std::move(devs), opts);
  }

  /// Sends every candidate at once, then collects the answers in order.
  std::vector<eval_result> evaluate(
    const std::vector<candidate>& cs, task_spec task = cpu_task()) {
    using handle = decltype((*self)->request(
      pool, caf::infinite, evaluate_atom_v, task, candidate{}, uint64_t{0}));
    std::vector<handle> handles;
    for (size_t i = 0; i < cs.size(); ++i)
      handles.push_back((*self)->request(
        pool, caf::infinite, evaluate_atom_v, task, cs[i], uint64_t{100 + i}));
    std::vector<eval_result> out;
    for (auto& h : handles)
      h.receive(
        [&](eval_result& r) {
          out.push_back(std::move(r));
        },
        [&](caf::error& err) {
          FAIL("pool failed: " << render(err));
        });
    return out;
  }

  pool_status status() {
    pool_status out;
    (*self)
      ->request(pool, caf::infinite, status_atom_v)
      .receive(
        [&](pool_status& s) {
          out = std::move(s);
        },
        [&](caf::error& err) {
          FAIL(render(err));
        });
    return out;
  }
};

inline uint64_t total(const std::map<std::string, uint64_t>& queued) {
  uint64_t n = 0;
  for (const auto& [team, k] : queued)
    n += k;
  return n;
}

} // namespace eat::test
