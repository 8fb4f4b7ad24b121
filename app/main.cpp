extern "C" int sc_main(int, char**) { return 0; }
int main() { return 0; }
