// Fixture for the layering test: a base-layer file that includes a tool header.
#pragma once
#include "src/app/cli.hpp"
