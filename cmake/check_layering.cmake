# The layering of docs/ARCHITECTURE.md, checked on every build: which of our folders each folder
# may include, and where each third-party library may be included. A forbidden include fails the
# build with the offending file:line.
#
#   cmake -DSOURCE_DIR=<checkout> [-DSTAMP=<file touched on success>] -P cmake/check_layering.cmake
#
# The rules are the table below; change them only with docs/ARCHITECTURE.md, saying why.

# folder -> the folders of ours it may include (itself always).
cmake_minimum_required(VERSION 3.25)

set(allowed_core "")
# workflows/: the loader's fit checks use the placement step's arithmetic (schedulers/placement).
set(allowed_workflows core schedulers)
set(allowed_schedulers core)
set(allowed_adapters core)
set(allowed_runtime core schedulers adapters)
set(allowed_api core workflows schedulers adapters runtime)
set(allowed_cli core workflows schedulers adapters runtime api)
set(layers core workflows schedulers adapters runtime api cli)
set(ours core workflows schedulers adapters runtime api cli tests bench examples)

# third-party header prefix -> the only folder (path prefix) that may include it.
set(third_party
  "zmq.h=runtime/transport/"
  "sqlite3.h=runtime/store/"
  "yaml-cpp/=workflows/"
  "slurm/=adapters/slurm/"
  "curl/=adapters/kubernetes/"
  "re2/=core/line_pattern"
  "Cbc_C_Interface.h=schedulers/planners/"
  # XGBoost trains the completion-time model (chorus model train) and nothing else: the decision
  # loop evaluates the dumped trees with schedulers/netaware/tree_model.cpp.
  "xgboost/=schedulers/netaware/training/"
  # Eigen computes the quorum rounds' training workloads (chorus_quorum_sgd) and nothing else.
  "Eigen/=schedulers/quorum/sgd/")
# Known departures, each with its reason (keep this list short; each entry is a debt).
#   schedulers/planners/platform_reader.cpp reads platform YAML files with yaml-cpp itself: the
#   planners' platform format predates the rule; it belongs in workflows/.
#   adapters/kubernetes/kube_config.cpp reads kubeconfig files with yaml-cpp: Kubernetes' own
#   format, not a workflow file; workflows/ has no business knowing clusters and users.
set(third_party_exceptions "schedulers/planners/platform_reader.cpp"
    "adapters/kubernetes/kube_config.cpp")

if(NOT SOURCE_DIR)
  message(FATAL_ERROR "check_layering.cmake: pass -DSOURCE_DIR=<checkout>")
endif()

set(errors "")
foreach(layer IN LISTS layers)
  file(GLOB_RECURSE files RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/${layer}/*.cpp ${SOURCE_DIR}/${layer}/*.hpp)
  set(may ${layer} ${allowed_${layer}})
  foreach(f IN LISTS files)
    file(STRINGS ${SOURCE_DIR}/${f} lines REGEX "^[ \t]*#[ \t]*include")
    # file(STRINGS) drops line numbers: find them again only for offending lines (rare).
    foreach(line IN LISTS lines)
      set(problem "")
      if(line MATCHES "#[ \t]*include[ \t]*\"([a-z_]+)/([^\"]*)\"")
        set(target ${CMAKE_MATCH_1})
        if(target IN_LIST ours AND NOT target IN_LIST may)
          list(JOIN may ", " may_text)
          set(problem "${layer}/ may not include \"${CMAKE_MATCH_1}/${CMAKE_MATCH_2}\" (${layer}/ may include ${may_text})")
        endif()
      elseif(line MATCHES "#[ \t]*include[ \t]*<([^>]*)>")
        set(header ${CMAKE_MATCH_1})
        foreach(rule IN LISTS third_party)
          string(REPLACE "=" ";" pair "${rule}")
          list(GET pair 0 prefix)
          list(GET pair 1 home)
          string(FIND "${header}" "${prefix}" at)
          string(FIND "${f}" "${home}" in_home)
          if(at EQUAL 0 AND NOT in_home EQUAL 0 AND NOT f IN_LIST third_party_exceptions)
            set(problem "<${header}> belongs in ${home} only (each third-party library lives in one place)")
          endif()
        endforeach()
      endif()
      if(problem)
        file(READ ${SOURCE_DIR}/${f} text)
        string(REPLACE "\n" ";" all_lines "${text}")
        set(n 0)
        set(where 0)
        foreach(l IN LISTS all_lines)
          math(EXPR n "${n} + 1")
          if(l STREQUAL line)
            set(where ${n})
            break()
          endif()
        endforeach()
        string(APPEND errors "${SOURCE_DIR}/${f}:${where}: error: ${problem}\n")
      endif()
    endforeach()
  endforeach()
endforeach()

if(errors)
  # Unformatted, one offending include per line (FATAL_ERROR's text would be rewrapped).
  message("${errors}")
  message(FATAL_ERROR "the layering of docs/ARCHITECTURE.md is broken (the lines above)")
endif()
if(STAMP)
  file(TOUCH ${STAMP})
endif()
