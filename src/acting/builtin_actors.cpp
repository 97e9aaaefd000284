// The actors of the built-in environments on the in-process client (declared extern in
// acting/builtin_actors.hpp).
#include "seedrl/acting/builtin_actors.hpp"

namespace seedrl {

SEEDRL_BUILTIN_ACTORS();

}  // namespace seedrl
