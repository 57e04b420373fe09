# Fails unless the sm100 kernel's PTX (-DPTX=file) holds every instruction the design needs,
# each at least the number of times the source issues it. Run by ctest (CPU only).
if(NOT PTX OR NOT EXISTS "${PTX}")
  message(FATAL_ERROR "PTX file not found: '${PTX}' (build target nvfp4_sm100_ptx first)")
endif()
file(READ "${PTX}" text)

# regex | minimum count | what it is
set(required
  "\\.target sm_100f|1|target sm_100f (the family of cc 10.0 and 10.3)"
  "tcgen05\\.mma\\.cta_group::1\\.kind::mxf4nvf4\\.block_scale\\.(scale_vec::4X|block16)|4|block-scaled NVFP4 MMA, 4 K steps per stage"
  "tcgen05\\.cp\\.cta_group::1\\.32x128b\\.warpx4|2|scale atom copies shared->tensor memory (A and B)"
  "tcgen05\\.ld\\.sync\\.aligned\\.32x32b|1|accumulator loads from tensor memory"
  "tcgen05\\.wait::ld|1|wait for the tensor-memory loads"
  "tcgen05\\.alloc\\.cta_group::1|1|tensor memory allocation"
  "tcgen05\\.dealloc\\.cta_group::1|1|tensor memory release"
  "tcgen05\\.relinquish_alloc_permit|1|allocation permit released"
  "tcgen05\\.commit\\.cta_group::1\\.mbarrier::arrive::one|2|MMA completion to mbarriers (stage free, accumulator full)"
  "cp\\.async\\.bulk\\.tensor\\.3d\\.[a-z:_.]*mbarrier::complete_tx::bytes|4|TMA loads of A, B, SFA, SFB"
  "mbarrier\\.try_wait\\.parity|1|pipeline waits"
  "mbarrier\\.arrive\\.expect_tx|1|producer transaction counts"
)
set(failed "")
foreach(entry IN LISTS required)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 regex)
  list(LENGTH parts n)
  if(n EQUAL 4)  # the MMA regex holds one '|' of its own
    list(GET parts 0 r0)
    list(GET parts 1 r1)
    set(regex "${r0}|${r1}")
    list(GET parts 2 min)
    list(GET parts 3 what)
  else()
    list(GET parts 1 min)
    list(GET parts 2 what)
  endif()
  string(REGEX MATCHALL "${regex}" hits "${text}")
  list(LENGTH hits count)
  if(count LESS min)
    string(APPEND failed "\n  ${what}: /${regex}/ found ${count} times, need ${min}")
  else()
    message(STATUS "ok  ${count}x ${what}")
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "sm100 PTX ${PTX} lacks:${failed}")
endif()
