// Fixture for the layering test: the tool header reached through a relative path.
#pragma once
