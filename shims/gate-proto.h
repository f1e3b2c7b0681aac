/*
 * The exec gate's client side of the request channel (src/protocol/messages.ts), in C so it can run
 * inside any process: JSON building, a small JSON reader for replies, the datagram request/reply with
 * bounded retries, the stream fallback, and the escalation handshake (descriptors by SCM_RIGHTS).
 * Nothing here execs anything: the gate never gates its own traffic. One header for the programs that
 * use all of it; the parts (a header and a .c file each; gate-shared is a header only):
 *   gate-shared     generated from src/protocol/shared-with-c.ts: version, limits, variable names
 *   gate-common     configuration (GATE_* variables), request ids, strings without stdio
 *   gate-json       buffers, JSON writing, the bounded JSON reader
 *   gate-request    the ExecRequest and the reply's parsing
 *   gate-transport  datagram and stream requests, the kept reply socket
 *   gate-escalate   the escalation handshake
 */
#ifndef GATE_PROTO_H
#define GATE_PROTO_H

#include "gate-common.h"
#include "gate-json.h"
#include "gate-request.h"
#include "gate-transport.h"
#include "gate-escalate.h"

#endif
