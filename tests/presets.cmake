# ctest -R presets: `cmake --list-presets` reads CMakePresets.json (a syntax
# or schema error fails here) and lists the five configure presets.
# Usage: cmake -DSOURCE_DIR=<repo> -P presets.cmake
execute_process(COMMAND ${CMAKE_COMMAND} --list-presets=all
  WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cmake --list-presets failed (${rc}): ${err}")
endif()
foreach(preset release dev debug asan scalar)
  if(NOT out MATCHES "\"${preset}\"")
    message(FATAL_ERROR "expected preset \"${preset}\" in cmake --list-presets, found:\n${out}")
  endif()
endforeach()
message(STATUS "presets: ${out}")
