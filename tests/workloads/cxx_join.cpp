// SPDX-License-Identifier: MIT
/*
 * A C++ program for the demangler: its main thread waits in
 * std::thread::join() for a worker that sleeps MS milliseconds in a
 * templated lambda, so that off-CPU stacks hold C++ names, from libstdc++
 * and from the program. Usage: cxx_join [MS=200]
 */
#include <chrono>
#include <cstdlib>
#include <thread>

namespace workload {
template <typename T> struct napper {
	T ms;
	void operator()() const { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }
};

void __attribute__((noinline)) wait_for(std::thread &t)
{
	t.join();
}
} // namespace workload

int main(int argc, char **argv)
{
	long ms = argc > 1 ? std::atol(argv[1]) : 200;
	std::thread t(workload::napper<long>{ms});

	workload::wait_for(t);
	return 0;
}
