// C++ names for the demangling test (sim/elf/tests/cpp_demangle.rs): namespaces, templates,
// overloads, operators, constructors/destructors, virtual functions, lambdas, anonymous namespaces.
namespace foo {
int bar() { return 1; }
int bar(int x) { return x + 1; }
template <typename T> __attribute__((noinline)) T twice(T x) { return x + x; }
struct S {
    S(int v) : v(v) {}
    virtual ~S() {}
    virtual int f(int a) const { return a + v; }
    S &operator+=(const S &o) { v += o.v; return *this; }
    int v;
};
template <typename T, int N> struct Buf { __attribute__((noinline)) T sum() const { T s = 0; for (int i = 0; i < N; i++) s += d[i]; return s; } T d[N]; };
}
namespace {
__attribute__((noinline)) int hidden(const char *p) { return p[0]; }
}
int use(int k)
{
    foo::S s(k), t(2);
    s += t;
    foo::Buf<unsigned, 4> b = {{1, 2, 3, 4}};
    auto l = [k](int x) __attribute__((noinline)) { return x * k; };
    return foo::bar() + foo::bar(k) + foo::twice<int>(k) + (int)foo::twice<float>(1.0f) + s.f(3) + (int)b.sum()
           + hidden("x") + l(5);
}
// Multiple inheritance: g++ emits a non-virtual thunk for C::g through B.
struct A { virtual int f() { return 1; } int a = 0; };
struct B { virtual int g() { return 2; } int b = 0; };
struct C : A, B { int g() override { return 3; } };
struct V { virtual int h() { return 4; } };
struct W : virtual V { int h() override { return 5; } };
int use2() { C c; W w; B *b = &c; V *v = &w; return b->g() + v->h(); }
