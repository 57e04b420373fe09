# Fails the build when a file includes something above its own layer.
# Usage: cmake -DROOT=<repo> [-DFILES=a;b;...] -P cmake/CheckLayers.cmake
#
# Every directory below is a component with a rank; a file may include files of its own
# component and of components of strictly lower rank. Three layers, bottom up:
#   base     include/ (plugin C ABI), src/core, src/format, src/gemm, src/device, src/problem
#   kernels  kernels/* (kernels under test, references, peers)
#   tool     src/measure, src/verify, src/report, src/registry, src/case and src/python,
#            src/sweep, src/app
# Tests, fuzz targets, benchmarks and examples stand above everything and are not checked.
set(NVFP4_LAYER_RANKS
  "include=0" "src/core=0" "src/format=0" "src/gemm=0"
  "src/device=1"
  "src/problem=2"
  "kernels/naive=3" "kernels/host=3" "kernels/sm90=3" "kernels/sm100=3" "kernels/reference=3"
  "kernels/peers=4"
  "src/measure=5" "src/verify=5"
  "src/report=6"
  "src/registry=7"
  "src/case=8" "src/python=8"
  "src/sweep=9"
  "src/app=10"
  "src/main.cpp=11")

# Sets ${out_comp} and ${out_rank} for a repository-relative path ("" / -1 when unchecked).
function(nvfp4_component path out_comp out_rank)
  set(comp "")
  set(rank -1)
  foreach(entry IN LISTS NVFP4_LAYER_RANKS)
    string(REPLACE "=" ";" kv "${entry}")
    list(GET kv 0 prefix)
    list(GET kv 1 r)
    if(path STREQUAL prefix OR path MATCHES "^${prefix}/")
      set(comp "${prefix}")
      set(rank ${r})
    endif()
  endforeach()
  set(${out_comp} "${comp}" PARENT_SCOPE)
  set(${out_rank} ${rank} PARENT_SCOPE)
endfunction()

if(NOT FILES)
  file(GLOB_RECURSE FILES RELATIVE "${ROOT}" "${ROOT}/src/*" "${ROOT}/kernels/*" "${ROOT}/include/*")
endif()

set(errors "")
foreach(file IN LISTS FILES)
  if(NOT file MATCHES "\\.(c|cc|cpp|cu|cuh|h|hpp)$")
    continue()
  endif()
  nvfp4_component("${file}" comp rank)
  if(rank EQUAL -1)
    continue()
  endif()
  file(STRINGS "${ROOT}/${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
  foreach(line IN LISTS includes)
    string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*" "\\1" inc "${line}")
    # One include root (the repository root); a relative spelling is resolved like the compiler
    # would (the file's own folder first) so it cannot sneak past the rule.
    get_filename_component(dir "${file}" DIRECTORY)
    if(EXISTS "${ROOT}/${dir}/${inc}" AND NOT EXISTS "${ROOT}/${inc}")
      get_filename_component(target "${ROOT}/${dir}/${inc}" ABSOLUTE)
      file(RELATIVE_PATH target "${ROOT}" "${target}")
      string(APPEND errors "${file}: #include \"${inc}\": name it from the repository root (\"${target}\")\n")
    else()
      set(target "${inc}")
    endif()
    nvfp4_component("${target}" tcomp trank)
    if(trank EQUAL -1 OR tcomp STREQUAL comp)
      continue()
    endif()
    if(NOT trank LESS rank)
      string(APPEND errors "${file}: #include \"${inc}\" goes upward: ${comp} (rank ${rank}) may include only ${comp} and components of lower rank, ${tcomp} has rank ${trank} (cmake/CheckLayers.cmake)\n")
    endif()
  endforeach()
endforeach()

if(errors)
  message(FATAL_ERROR "layering violations:\n${errors}")
endif()
