#pragma once
// Logging goes to stderr through spdlog so stdout stays the report table.
#include <spdlog/spdlog.h>

#include <string>

namespace sim {

// level: trace, debug, info, warn, error, off. Throws std::invalid_argument.
void init_logging(const std::string& level);

}  // namespace sim
