// eat-test-nvcc-on-cpu: a stand-in for nvcc and hipcc with which a whole
// CUDA or HIP device runs on the CPU in tests (docs/harness.md, "A GPU
// device on the CPU"). It takes the command line the GPU toolchain gives the
// real compilers (devices/gpu_toolchain.hpp), turns the .cu or .hip source
// into C++ whose kernels run on the CPU (tests/devices/cuda_on_cpu.hpp, GPU
// entry kept) and builds that with g++ into the requested shared object.
// The other flags (-arch, --offload-arch, -cudart, -Xcompiler, -l...) are
// the GPU's and are dropped. `--version` names a CUDA and a HIP release, so
// that the toolchain accepts it for either backend.
//
// Exit status: g++'s; 1 if the source cannot be rewritten or the command
// line names no source or output (the reason on stderr).

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "tests/devices/cuda_on_cpu.hpp"

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size()
         && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int fail(const std::string& why) {
  std::fprintf(stderr, "eat-test-nvcc-on-cpu: %s\n", why.c_str());
  return 1;
}

std::string read_all(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    throw std::runtime_error("cannot read " + path);
  return std::string{std::istreambuf_iterator<char>{in}, {}};
}

/// Runs g++ on `cpp` into `out`; returns its exit status.
int run_gxx(const std::string& cpp, const std::string& out) {
  std::vector<std::string> args{
    "g++", "-std=c++17", "-O2", "-shared", "-fPIC", "-o", out, cpp};
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0)
    return fail("cannot start g++");
  if (pid == 0) {
    ::execvp("g++", argv.data());
    std::perror("eat-test-nvcc-on-cpu: g++");
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      return fail("cannot wait for g++");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

} // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() == 1 && args[0] == "--version") {
    std::printf("Cuda compilation tools, release 0.0 (kernels on the CPU)\n"
                "HIP version: 0.0 (kernels on the CPU)\n");
    return 0;
  }
  std::string source;
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "-o" && i + 1 < args.size())
      out = args[++i];
    else if (ends_with(args[i], ".cu") || ends_with(args[i], ".hip"))
      source = args[i];
  }
  if (source.empty() || out.empty())
    return fail("no .cu or .hip source, or no -o");
  std::string cpp;
  try {
    using eat::devices::test::entry;
    auto text = read_all(source);
    cpp = ends_with(source, ".hip")
            ? eat::devices::test::hip_on_cpu(text, entry::gpu)
            : eat::devices::test::cuda_on_cpu(text, entry::gpu);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  auto cpp_path = source + ".cpp";
  {
    std::ofstream file{cpp_path, std::ios::binary};
    file << cpp;
    if (!file)
      return fail("cannot write " + cpp_path);
  }
  return run_gxx(cpp_path, out);
}
