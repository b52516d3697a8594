# What scripts/gpu-check.sh runs, which it builds or scripts/gpu-bundle.sh
# bundles (sourced by both): programs in the build folder, test programs
# in its tests/devices/ (the runners on the CPU answer
# tests/devices/gpu_probe_test.cpp's questions), and benchmarks in its
# bench/ (process_switch_bench: what kernel processes cost on the host CPU).
gpu_programs=(eat eat-runner eat-keeper eat-cuda-runner)
gpu_tests=(eat_gpu_hw_tests eat_gpu_definition_hw_tests eat_gpu_device_tests
           eat_gpu_definition_tests eat_gpu_tests
           eat-test-cuda-runner-on-cpu eat-test-hip-runner-on-cpu)
gpu_benches=(process_switch_bench)
