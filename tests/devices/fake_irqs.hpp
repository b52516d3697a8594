// A machine's /sys/kernel/irq and /proc/irq, made up in a scratch folder,
// for the tests of the interrupt count (devices/runner/interrupts.hpp).

#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "devices/runner/interrupts.hpp"
#include "tests/devices/test_support.hpp"

namespace eat::devices::test {

/// Writes `text` to the file at `path`, replacing what it held.
inline void write_irq_file(
  const std::filesystem::path& path, const std::string& text) {
  std::ofstream out{path, std::ios::trunc};
  out << text;
}

/// A machine's /sys/kernel/irq and /proc/irq, made up in a scratch folder.
class fake_irqs {
public:
  /// Interrupt `n`, whose affinity is `affinity` (its effective one
  /// `effective`, where given), counted `counts` ("3,7": CPU 0, CPU 1).
  void route(int n, const std::string& affinity, const std::string& counts,
    const std::string& effective = {}) {
    auto proc = dir_.path() / "proc" / std::to_string(n);
    std::filesystem::create_directories(proc);
    std::filesystem::create_directories(sys(n));
    write_irq_file(proc / "smp_affinity_list", affinity + "\n");
    if (!effective.empty())
      write_irq_file(proc / "effective_affinity_list", effective + "\n");
    count(n, counts);
  }

  /// Interrupt `n` goes (its device unplugged).
  void remove(int n) {
    std::filesystem::remove_all(dir_.path() / "proc" / std::to_string(n));
    std::filesystem::remove_all(sys(n));
  }

  void count(int n, const std::string& counts) {
    write_irq_file(sys(n) / "per_cpu_count", counts + "\n");
  }

  interrupt_counter counter(int32_t core) const {
    return interrupt_counter::of_core(
      core, (dir_.path() / "sys").string(), (dir_.path() / "proc").string());
  }

private:
  std::filesystem::path sys(int n) const {
    return dir_.path() / "sys" / std::to_string(n);
  }

  scratch_dir dir_ = make_temp_dir();
};

/// A watch, started at 0, over a counter of one made-up interrupt (36)
/// routed to CPU 0 and counted 0 so far.
class watched_irq {
public:
  watched_irq() : counter_{routed(irqs_)}, watch{&counter_} {
    watch.start(0);
  }
  watched_irq(const watched_irq&) = delete;
  watched_irq& operator=(const watched_irq&) = delete;

  bool is_open() const {
    return counter_.is_open();
  }

  /// Sets the interrupt's count so far to `all`.
  void count(int64_t all) {
    irqs_.count(36, std::to_string(all));
  }

private:
  static interrupt_counter routed(fake_irqs& irqs) {
    irqs.route(36, "0", "0");
    return irqs.counter(0);
  }

  fake_irqs irqs_;
  interrupt_counter counter_;

public:
  interrupt_watch watch;
};

} // namespace eat::devices::test
