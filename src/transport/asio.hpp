// The one place seedrl includes Boost.Asio (never from a public header).
#pragma once

// Boost 1.74's Asio uses std::exchange without including <utility>, which C++20 libstdc++ no
// longer brings in through other headers.
#include <utility>

#include <boost/asio.hpp>
