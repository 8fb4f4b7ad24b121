#include "sim/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <stdexcept>

namespace sim {

void init_logging(const std::string& level) {
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off")
    throw std::invalid_argument("unknown log level '" + level + "'; expected trace, debug, info, warn, error or off");
  auto logger = spdlog::stderr_color_mt("tpusim");
  logger->set_pattern("[%l] %v");
  spdlog::set_default_logger(logger);
  spdlog::set_level(lvl);
}

}  // namespace sim
