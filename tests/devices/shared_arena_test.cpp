// Specification of the shared arena (devices/shared_arena.hpp): the memory
// a runner shares with its kernel processes, from which page_allocator
// takes the harness's buffers while it is installed.

#include <cstdint>

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "devices/kinds/problem.hpp"
#include "devices/shared_arena.hpp"

using namespace eat::devices;

TEST_CASE("the arena gives aligned blocks and takes them back, merging "
          "neighbours") {
  shared_arena arena{1 << 20};
  REQUIRE(arena.error().empty());
  auto* a = arena.allocate(100, 64);
  auto* b = arena.allocate(5000, 4096);
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(a) % 64 == 0);
  CHECK(reinterpret_cast<uintptr_t>(b) % 4096 == 0);
  CHECK(arena.owns(a));
  CHECK(arena.owns(b));
  CHECK_FALSE(arena.owns(&arena));
  CHECK(arena.allocate(2 << 20, 64) == nullptr);
  arena.release(a, 100);
  arena.release(b, 5000);
  CHECK(arena.free_bytes() == arena.size());
  CHECK(arena.allocate(arena.size(), 4096) == arena.base());
}

TEST_CASE("the arena's used span ends at the highest block given out") {
  shared_arena arena{1 << 20};
  REQUIRE(arena.error().empty());
  CHECK(arena.used_bytes() == 0);
  auto* a = arena.allocate(100, 64);
  auto* b = arena.allocate(5000, 4096);
  REQUIRE(b != nullptr);
  auto end_of_b = static_cast<size_t>(
    static_cast<char*>(b) + 5000 - static_cast<char*>(arena.base()));
  CHECK(arena.used_bytes() >= end_of_b);
  CHECK(arena.used_bytes() < end_of_b + 64);
  // A block freed below the highest leaves the span as it was.
  arena.release(a, 100);
  CHECK(arena.used_bytes() >= end_of_b);
  arena.release(b, 5000);
  CHECK(arena.used_bytes() == 0);
  // Taken whole, the arena is all used.
  CHECK(arena.allocate(arena.size(), 4096) == arena.base());
  CHECK(arena.used_bytes() == arena.size());
}

TEST_CASE("while installed, the harness's buffers come from the arena and "
          "are the same memory in a forked process") {
  shared_arena arena{1 << 20};
  REQUIRE(arena.error().empty());
  arena.install();
  REQUIRE(installed_arena() == &arena);
  {
    typed_buffer buf{dtype::float32, 1000};
    REQUIRE(arena.owns(buf.data()));
    auto child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      buf.set(7, 42.0);
      ::_exit(0);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(buf.get(7) == 42.0);
  }
  CHECK(arena.free_bytes() == arena.size());
}

TEST_CASE("an arena uninstalls itself when it goes") {
  {
    shared_arena arena{1 << 16};
    arena.install();
  }
  CHECK(installed_arena() == nullptr);
  typed_buffer buf{dtype::float32, 10};
  CHECK(buf.data() != nullptr);
}

TEST_CASE("arenas lie apart from where a fresh process puts its program, "
          "libraries and stack, so that a kernel's process can map them at "
          "the same address") {
#if defined(__x86_64__)
  // Linux puts a fresh PIE's program near 0x5555'0000'0000 and its
  // libraries and stack near the top, both at random offsets.
  shared_arena first{1 << 20};
  shared_arena second{1 << 20};
  REQUIRE(first.error().empty());
  REQUIRE(second.error().empty());
  for (const auto* arena : {&first, &second}) {
    auto base = reinterpret_cast<uintptr_t>(arena->base());
    CHECK(base >= 0x2000'0000'0000);
    CHECK(base + arena->size() <= 0x5000'0000'0000);
  }
  CHECK(first.base() != second.base());
#else
  SUCCEED("the preferred address is x86-64's");
#endif
}
