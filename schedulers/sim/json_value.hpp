// Transitional: cli/cmd_simulate.cpp still includes this name for json_quote. The hand-written
// JSON reader that lived here is replaced by nlohmann-json; delete this file once that include
// reads "schedulers/sim/json_text.hpp".
#pragma once

#include "schedulers/sim/json_text.hpp"
