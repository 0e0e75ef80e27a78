// A 4-ary min-heap over a std::vector, kept by hand for the simulator's queues (the event engine's pending
// events, the resources' waiting lines). `before(a, b)`: a leaves the heap before b. With a strict total
// order (the engine's (time, seq), a waiting line's (priority, seq)) every correct heap pops the same
// sequence, so the heap's shape never shows in a result; a 4-ary heap does half the levels of a binary
// heap per pop, with a node's children in one or two cache lines.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace moesim::sim {

inline constexpr size_t kHeapArity = 4;

// Adds `x`: sifts up from a hole at the end, each parent that leaves after x moving down one level.
template <typename T, typename Before>
void quad_heap_push(std::vector<T>& heap, const T& x, Before before) {
  size_t i = heap.size();
  heap.emplace_back();
  T* h = heap.data();
  while (i > 0) {
    const size_t parent = (i - 1) / kHeapArity;
    if (!before(x, h[parent])) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = x;
}

// Removes and returns the first element (heap not empty): the last element sifts down from a hole at the
// root, the earliest child moving up while it leaves before it.
template <typename T, typename Before>
T quad_heap_pop(std::vector<T>& heap, Before before) {
  const T top = heap.front();
  const T last = heap.back();
  heap.pop_back();
  const size_t n = heap.size();
  if (n == 0) return top;
  T* h = heap.data();
  size_t i = 0;
  for (;;) {
    const size_t first = kHeapArity * i + 1;
    if (first >= n) break;
    const size_t end = std::min(first + kHeapArity, n);
    size_t best = first;
    for (size_t c = first + 1; c < end; ++c)
      if (before(h[c], h[best])) best = c;
    if (!before(h[best], last)) break;
    h[i] = h[best];
    i = best;
  }
  h[i] = last;
  return top;
}

}  // namespace moesim::sim
