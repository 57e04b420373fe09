// Linked into every executable of a sanitized build (NVFP4_SANITIZE): defaults that make the
// CUDA libraries coexist with AddressSanitizer, so tests run without environment variables.
// ASAN_OPTIONS / LSAN_OPTIONS in the environment still override them.
//  - protect_shadow_gap=0: the CUDA driver reserves fixed addresses inside ASan's shadow gap;
//    with the gap protected, cuInit/cudaMalloc fail with "out of memory" on GPU machines
//    (google/sanitizers#629). Harmless without a GPU.
//  - leaks inside libcuda, libcudart and libcublasLt (allocated once at initialisation, never
//    freed) are not ours to fix: suppressed; leaks in our code still fail.
extern "C" const char* __asan_default_options() { return "protect_shadow_gap=0"; }
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libcuda.so\nleak:libcudart.so\nleak:libcublasLt.so\nleak:libnvidia-\n";
}
// Undefined behaviour is compiled not to recover (-fno-sanitize-recover); say where it was.
extern "C" const char* __ubsan_default_options() { return "print_stacktrace=1"; }
