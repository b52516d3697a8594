# Detects the optional GPU toolchains. Sets EAT_HAVE_CUDA / EAT_HAVE_HIP and,
# for each found toolchain, enables what devices/ needs to compile its sources.
#
# CUDA: nvcc through CMake's CUDA language; architectures from
#       EAT_CUDA_ARCHITECTURES (default "80;90", never "native").
# HIP:  Debian's hipcc does not work with enable_language(HIP) (see
#       NOTES-LIBRARIES.md), so devices/ compiles .hip files with a custom
#       command calling hipcc with an explicit --offload-arch per entry of
#       EAT_HIP_ARCHITECTURES, and links hip::host.

set(EAT_HAVE_CUDA OFF)
set(EAT_HAVE_HIP OFF)

if(EAT_ENABLE_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_ARCHITECTURES "${EAT_CUDA_ARCHITECTURES}")
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(EAT_HAVE_CUDA ON)
  endif()
endif()

if(EAT_ENABLE_HIP)
  find_program(EAT_HIPCC hipcc)
  find_package(hip CONFIG QUIET)
  if(EAT_HIPCC AND hip_FOUND)
    set(EAT_HAVE_HIP ON)
  endif()
endif()

message(STATUS "eat: CUDA backend ${EAT_HAVE_CUDA} (${EAT_CUDA_ARCHITECTURES}), "
               "HIP backend ${EAT_HAVE_HIP} (${EAT_HIP_ARCHITECTURES})")
