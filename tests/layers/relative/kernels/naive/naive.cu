// Fixture for the layering test: an upward include spelled relative to the file.
#include "../../src/app/cli.hpp"
