# Compiles each of SOURCES (a ;-list) with the host C++ compiler CXX alone: -fsyntax-only, the
# repository root ROOT as the only include path, no CUDA include path. -H lists every header the
# compiler opens; the check fails if a source does not compile so, or opens a CUDA header (as it
# would where the toolkit's headers sit on the default include path).
# Usage: cmake -DCXX=<c++> -DROOT=<repo> -DSOURCES=a.cpp;b.cpp -P check_host_only.cmake
foreach(src IN LISTS SOURCES)
  execute_process(COMMAND ${CXX} -std=c++17 -fsyntax-only -H -I${ROOT} ${src}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "NOT HOST-ONLY: ${src} does not compile with the host compiler alone (no CUDA headers):\n${err}")
  endif()
  string(REGEX MATCH "[^\n]*(/cuda[^/\n]*\\.h|/cuda/|cuda_runtime|cuda_fp16)[^\n]*" hit "${err}")
  if(hit)
    message(FATAL_ERROR "NOT HOST-ONLY: ${src} includes a CUDA header: ${hit}")
  endif()
  message(STATUS "${src}: host compiler alone, no CUDA header")
endforeach()
