#pragma once
// libxenstore's header has no extern "C" guard of its own.

extern "C" {
#include <xenstore.h>
}
