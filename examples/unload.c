// Step-trace fixture: loads a library, runs a function of it, then unloads the library.
// usage: unload PLUGIN.so
#include <dlfcn.h>
#include <stdio.h>

// Where a trace starts and ends: around the load, the call into the library and its dlclose.
__attribute__((noinline)) void before_load(void) { __asm__ volatile(""); }
__attribute__((noinline)) void before_call(void) { __asm__ volatile(""); }
__attribute__((noinline)) void unloaded(void) { __asm__ volatile(""); }

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PLUGIN.so\n", argv[0]);
    return 2;
  }
  before_load();
  void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!plugin) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  int (*work)(int) = (int (*)(int))dlsym(plugin, "plugin_work");
  if (!work) {
    fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  before_call();
  const int sum = work(10);
  dlclose(plugin);
  unloaded();
  return sum == 135 ? 0 : 3;
}
