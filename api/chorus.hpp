// The embeddable Chorus API: include this one header, link chorus::chorus.
#pragma once

#include "api/run_workflow.hpp"
#include "api/tasks.hpp"
#include "core/status.hpp"
#include "core/task_spec.hpp"
#include "core/workflow_graph.hpp"
#include "runtime/backends/agents_backend.hpp"
#include "runtime/backends/execution_backend.hpp"
#include "runtime/backends/local_backend.hpp"
#include "runtime/backends/slurm_backend.hpp"
#include "runtime/cancel_token.hpp"
#include "runtime/run_observer.hpp"
#include "schedulers/policy_registry.hpp"

namespace chorus {
const char* version();
}
