/* An LD_PRELOAD library that does nothing: the floor any preload costs a
 * process (the loader maps and relocates one more object), measured beside
 * ste in P2 so the two costs can be told apart. */
int bench_empty_preload_marker(void) { return 0; }
