// <chorus/chorus.hpp>: the one header an embedding application includes.
#pragma once

#include "api/chorus.hpp"
