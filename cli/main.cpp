#include <cstdio>
int main() { std::puts("chorus: under construction"); return 0; }
