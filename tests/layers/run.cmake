# ctest -R layers: cmake/check_layers.cmake passes the real tree, and refuses
# a tree where a lower layer includes a higher one's header, naming the file.
#   cmake -DSOURCE_DIR=<repo> -DLAYERS=<as CMakeLists.txt passes it> -DWORK=<scratch dir> -P run.cmake
set(check "${SOURCE_DIR}/cmake/check_layers.cmake")
file(MAKE_DIRECTORY ${WORK})

# The tree as it is.
execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${SOURCE_DIR}/src "-DLAYERS=${LAYERS}" -DSTAMP=${WORK}/real.ok -P ${check}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "layers: the source tree fails its own check:\n${err}")
endif()

# A small tree: kernels below pipeline. Downward and same-layer includes pass.
file(REMOVE_RECURSE ${WORK}/src)
file(WRITE ${WORK}/src/kernels/k.hpp "#pragma once\n#include <vector>\n#include \"kernels/k2.hpp\"\n")
file(WRITE ${WORK}/src/kernels/k2.hpp "#pragma once\n")
file(WRITE ${WORK}/src/pipeline/p.cpp "#include \"kernels/k.hpp\"\n#include \"pipeline/p.hpp\"\n")
file(WRITE ${WORK}/src/pipeline/p.hpp "#pragma once\n")
set(small "kernels=kernels|pipeline=pipeline")
execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${WORK}/src "-DLAYERS=${small}" -DSTAMP=${WORK}/small.ok -P ${check}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "layers: a tree whose includes point down was refused:\n${err}")
endif()

# One include pointing up: refused, naming the file, its layer and the header.
file(WRITE ${WORK}/src/kernels/k2.hpp "#pragma once\n  #  include \"pipeline/p.hpp\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${WORK}/src "-DLAYERS=${small}" -DSTAMP=${WORK}/up.ok -P ${check}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "layers: kernels/k2.hpp includes pipeline/p.hpp and the check passed")
endif()
string(FIND "${err}" "kernels/k2.hpp (layer kernels) includes \"pipeline/p.hpp\" of the higher layer pipeline" at)
if(at EQUAL -1)
  message(FATAL_ERROR "layers: the refusal does not name the file and the header:\n${err}")
endif()

# xsimd outside kernels/, and xtensor anywhere but trace/xview.hpp.
file(WRITE ${WORK}/src/kernels/k2.hpp "#pragma once\n")
file(WRITE ${WORK}/src/pipeline/p.hpp "#pragma once\n#include <xsimd/xsimd.hpp>\n#include <xtensor/xarray.hpp>\n")
execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${WORK}/src "-DLAYERS=${small}" -DSTAMP=${WORK}/ext.ok -P ${check}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "pipeline/p.hpp includes xsimd" OR NOT err MATCHES "pipeline/p.hpp includes xtensor")
  message(FATAL_ERROR "layers: xsimd and xtensor outside their places were not refused:\n${err}")
endif()
file(WRITE ${WORK}/src/pipeline/p.hpp "#pragma once\n")

# A folder in no layer is refused too (a new folder must be given a layer).
file(WRITE ${WORK}/src/kernels/k2.hpp "#pragma once\n")
file(WRITE ${WORK}/src/stray/s.cpp "\n")
execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${WORK}/src "-DLAYERS=${small}" -DSTAMP=${WORK}/stray.ok -P ${check}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "stray/s.cpp: its folder stray/ is in no layer")
  message(FATAL_ERROR "layers: a folder in no layer was not refused:\n${err}")
endif()
