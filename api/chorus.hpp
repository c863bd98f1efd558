// The embeddable Chorus API: include this one header.
#pragma once

#include "core/status.hpp"
#include "core/task_spec.hpp"
#include "core/workflow_graph.hpp"
