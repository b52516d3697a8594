# Detects the optional GPU toolchains. Sets EAT_HAVE_CUDA / EAT_HAVE_HIP and,
# for each found toolchain, enables what devices/ needs to compile its sources.
#
# CUDA: nvcc through CMake's CUDA language; architectures from
#       EAT_CUDA_ARCHITECTURES (default "80;90", never "native").
# HIP:  Debian's hipcc does not work with enable_language(HIP) (see
#       NOTES-LIBRARIES.md), so devices/ compiles .hip files with a custom
#       command calling hipcc with an explicit --offload-arch per entry of
#       EAT_HIP_ARCHITECTURES that hipcc supports (EAT_HIP_TARGETS), and
#       links hip::host.

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

# Keeps the architectures of EAT_HIP_ARCHITECTURES that hipcc can target
# (Debian 12's hipcc is clang 15, which knows gfx90a but not gfx942) in
# EAT_HIP_TARGETS, and warns about the others.
function(eat_check_hip_architectures)
  set(probe "${CMAKE_BINARY_DIR}/hip_arch_probe.hip")
  file(WRITE "${probe}" "#include <hip/hip_runtime.h>\n__global__ void k(int* x) { *x = 1; }\n")
  # hipcc leaves empty directories in TMPDIR even when it succeeds.
  set(tmp "${CMAKE_BINARY_DIR}/hip_arch_probe.tmp")
  file(MAKE_DIRECTORY "${tmp}")
  set(kept "")
  foreach(arch IN LISTS EAT_HIP_ARCHITECTURES)
    execute_process(
      COMMAND "${CMAKE_COMMAND}" -E env "TMPDIR=${tmp}"
              "${EAT_HIPCC}" "--offload-arch=${arch}" -c "${probe}"
              -o "${CMAKE_BINARY_DIR}/hip_arch_probe.o"
      RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
    if(rc EQUAL 0)
      list(APPEND kept "${arch}")
    else()
      message(WARNING "eat: hipcc cannot target ${arch}; HIP sources are "
                      "built without it (a newer ROCm toolchain can)")
    endif()
  endforeach()
  file(REMOVE_RECURSE "${tmp}")
  set(EAT_HIP_TARGETS "${kept}" PARENT_SCOPE)
endfunction()

set(EAT_HIP_TARGETS "")
if(EAT_ENABLE_HIP)
  find_program(EAT_HIPCC hipcc)
  find_package(hip CONFIG QUIET)
  if(EAT_HIPCC AND hip_FOUND)
    eat_check_hip_architectures()
    if(EAT_HIP_TARGETS)
      set(EAT_HAVE_HIP ON)
    else()
      message(WARNING "eat: hipcc targets none of ${EAT_HIP_ARCHITECTURES}; "
                      "the HIP backend is off")
    endif()
  endif()
endif()

message(STATUS "eat: CUDA backend ${EAT_HAVE_CUDA} (${EAT_CUDA_ARCHITECTURES}), "
               "HIP backend ${EAT_HAVE_HIP} (${EAT_HIP_TARGETS})")
