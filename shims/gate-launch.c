/* The gate-launch program: the kernel layer's launcher and supervisor (gate-launch.h says what it does; its
 * parts are in launch/). Not pure: it is the whole program. */
#include "gate-launch.h"

int main(int argc, char **argv) { return gate_launch(argc, argv); }
