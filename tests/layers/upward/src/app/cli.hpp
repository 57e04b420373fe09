// Fixture for the layering test: the tool header the base file wrongly includes.
#pragma once
