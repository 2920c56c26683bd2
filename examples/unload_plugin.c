// The library the unload fixture loads, runs and unloads.
int plugin_work(int n) {
  int sum = 0;
  for (int i = 0; i < n; ++i)
    sum += 3 * i;
  return sum;
}
