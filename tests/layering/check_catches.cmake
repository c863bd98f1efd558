# Build.Layering.*: the layering check (cmake/check_layering.cmake) refuses a forbidden include
# and a third-party header outside its home, naming file:line, and passes a clean tree.
#   cmake -DCHECKER=<check_layering.cmake> -DWORK=<scratch folder> -P check_catches.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE ${WORK})
file(WRITE ${WORK}/bad/core/ids.hpp "// ids\n#pragma once\n#include \"runtime/coordinator.hpp\"\n")
file(WRITE ${WORK}/bad/adapters/net.cpp "#include <string>\n#include <zmq.h>\n")
file(WRITE ${WORK}/bad/schedulers/p.cpp "#include \"core/status.hpp\"\n#include \"adapters/launcher.hpp\"\n")
file(WRITE ${WORK}/good/core/ids.hpp "#pragma once\n#include \"core/status.hpp\"\n#include <vector>\n")
file(WRITE ${WORK}/good/runtime/r.cpp "#include \"schedulers/policy.hpp\"\n#include \"adapters/launcher.hpp\"\n")

execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${WORK}/bad -P ${CHECKER}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "the check passed a tree with forbidden includes:\n${err}")
endif()
foreach(expected
    "${WORK}/bad/core/ids.hpp:3: error: core/ may not include \"runtime/coordinator.hpp\""
    "${WORK}/bad/adapters/net.cpp:2: error: <zmq.h> belongs in runtime/transport/ only"
    "${WORK}/bad/schedulers/p.cpp:2: error: schedulers/ may not include \"adapters/launcher.hpp\"")
  string(FIND "${err}" "${expected}" at)
  if(at LESS 0)
    message(FATAL_ERROR "missing from the check's output: ${expected}\noutput:\n${err}")
  endif()
endforeach()

execute_process(COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${WORK}/good -P ${CHECKER}
                RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the check refused a clean tree:\n${err}")
endif()
file(REMOVE_RECURSE ${WORK})
