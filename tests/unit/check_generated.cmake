# A generated source must be its generator's output: runs PYTHON SCRIPT into OUT and compares
# OUT with the committed FILE (usage: cmake -DPYTHON=.. -DSCRIPT=.. -DFILE=.. -DOUT=.. -P this).
execute_process(COMMAND ${PYTHON} ${SCRIPT} OUTPUT_FILE ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SCRIPT} failed (exit ${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT} ${FILE} RESULT_VARIABLE diff)
if(NOT diff EQUAL 0)
  message(FATAL_ERROR "${FILE} is not the output of ${SCRIPT}: regenerate it (${SCRIPT} > ${FILE})")
endif()
message(STATUS "${FILE} matches ${SCRIPT}")
