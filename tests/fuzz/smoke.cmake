# ctest's fuzz smoke run: a few seconds of fuzzing, passing when the fuzzer was not built (its
# compiler lacked libFuzzer) and failing on any crash it finds. cmake -DFUZZER=... -DCORPUS=... -P
if(NOT EXISTS ${FUZZER})
  message(STATUS "no fuzzer was built; nothing to run")
  return()
endif()
file(MAKE_DIRECTORY ${CORPUS})
execute_process(COMMAND ${FUZZER} -max_total_time=5 -rss_limit_mb=1024 ${CORPUS}
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "the diff-record decoder fuzzer failed (exit ${result}); see its output")
endif()
