// Configuration every actor system of eat needs: the type-ID block of the
// protocol and the "eat" error category, so that messages serialise and
// errors render. Call before constructing the actor_system.

#pragma once

#include <caf/actor_system_config.hpp>

namespace eat {

/// Registers eat's message types and error category in `cfg`.
void configure_actor_system(caf::actor_system_config& cfg);

} // namespace eat
