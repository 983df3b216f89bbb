# Fails when a file of src/ includes a header of a higher layer, xtensor
# anywhere but trace/xview.hpp (the library's API speaks xtensor, its code
# does not: CMakeLists.txt, attntrace::xtensor), or xsimd outside kernels/.
#   cmake -DSRC=<src dir> -DLAYERS="core=core|kernels=kernels|...|pipeline=pipeline,batch,decode|..."
#         -DSTAMP=<file touched when every include points down> -P check_layers.cmake
# LAYERS lists the layers lowest first, each with its folders (CMakeLists.txt,
# ATTNTRACE_LAYERS). A file may include its own layer's headers and those of
# any layer below; tests and tools outside src/ are not checked.
string(REPLACE "|" ";" layers "${LAYERS}")
set(rank 0)
foreach(entry IN LISTS layers)
  string(REGEX MATCH "^([a-z_]+)=(.*)$" _ "${entry}")
  set(layer "${CMAKE_MATCH_1}")
  string(REPLACE "," ";" dirs "${CMAKE_MATCH_2}")
  foreach(dir IN LISTS dirs)
    set(rank_of_${dir} ${rank})
    set(layer_of_${dir} ${layer})
  endforeach()
  math(EXPR rank "${rank} + 1")
endforeach()

set(problems "")
file(GLOB_RECURSE files RELATIVE "${SRC}" "${SRC}/*.hpp" "${SRC}/*.cpp")
foreach(file IN LISTS files)
  string(REGEX MATCH "^([^/]+)/" _ "${file}")
  set(dir "${CMAKE_MATCH_1}")
  if(NOT DEFINED rank_of_${dir})
    string(APPEND problems "  ${file}: its folder ${dir}/ is in no layer (CMakeLists.txt, ATTNTRACE_LAYERS)\n")
    continue()
  endif()
  file(STRINGS "${SRC}/${file}" systems REGEX "^[ \t]*#[ \t]*include[ \t]*<(xtensor|xsimd)/")
  foreach(line IN LISTS systems)
    if(line MATCHES "<xtensor/" AND NOT file STREQUAL "trace/xview.hpp")
      string(APPEND problems "  ${file} includes xtensor: only trace/xview.hpp may (the library is built without it)\n")
    elseif(line MATCHES "<xsimd/" AND NOT dir STREQUAL "kernels")
      string(APPEND problems "  ${file} includes xsimd: only kernels/ may (kernels/tuning.hpp has the constants)\n")
    endif()
  endforeach()
  file(STRINGS "${SRC}/${file}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"]+\"")
  foreach(line IN LISTS includes)
    string(REGEX MATCH "\"([^\"/]+)/[^\"]*\"" _ "${line}")
    set(target_dir "${CMAKE_MATCH_1}")
    if(target_dir STREQUAL "" OR NOT DEFINED rank_of_${target_dir})
      continue()  # a header beside it, or one outside src/ (generated)
    endif()
    if(rank_of_${target_dir} GREATER rank_of_${dir})
      string(REGEX MATCH "\"[^\"]+\"" header "${line}")
      string(APPEND problems
             "  ${file} (layer ${layer_of_${dir}}) includes ${header} of the higher layer ${layer_of_${target_dir}}\n")
    endif()
  endforeach()
endforeach()

if(problems)
  message(FATAL_ERROR "attntrace's layers (CMakeLists.txt, docs/ARCHITECTURE.md) are linked one way:\n${problems}")
endif()
file(TOUCH "${STAMP}")
