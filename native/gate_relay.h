/* gate_relay: the proxy's tunnel byte copying (gate_relay.c), registered on the addon's exports. */
#ifndef GATE_RELAY_H
#define GATE_RELAY_H
#include <node_api.h>
void gate_relay_register(napi_env env, napi_value exports);
#endif
