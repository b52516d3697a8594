#include "runtime/system_setup.hpp"

#include <caf/message.hpp>

#include "actors/protocol/error.hpp"
#include "actors/protocol/type_ids.hpp"

namespace eat {

void configure_actor_system(caf::actor_system_config& cfg) {
  cfg.add_message_types<caf::id_block::eat>();
  cfg.add_error_category(error_category_atom,
                         [](uint8_t code, caf::atom_value category,
                            const caf::message& ctx) {
                           return render(caf::error{code, category, ctx});
                         });
}

} // namespace eat
