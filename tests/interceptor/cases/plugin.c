/* libste_case_plugin.so, loaded by dlopen_case. */
int ste_case_plugin_value(void) { return 42; }
