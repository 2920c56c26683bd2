int main() { return 0; } // replaced once Session lands
