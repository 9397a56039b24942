/* What the kernel groups share: index type, OpenMP helpers, and vectorisable math for float32 kernels.
 *
 * NOTE [ Vectorisable exp ]
 * glibc's expf/exp are scalar calls the compiler cannot vectorise without -ffast-math (which ember does
 * not use: NOTE [ Exact flags ] in __init__.py). em_exp computes exp in double, branch-free, so a loop
 * over it vectorises: x = n ln2 + r with |r| <= ln2/2, exp(r) by a degree-11 Taylor polynomial (relative
 * error < 2e-16 on that interval), times 2^n built from the exponent bits. Arguments are clamped to
 * [-708, 708] (past them a float32 result is 0 or inf anyway, and the double is still finite/normal
 * there), +-inf give 0 and inf, NaN gives NaN. Rounded to float32, the result is the correctly rounded
 * expf except within ~1e-9 ulp of a rounding boundary.
 */
#ifndef EMBER_COMMON_H
#define EMBER_COMMON_H
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

typedef int64_t idx;

static inline double em_exp(double x) {
    double xc = x < -708.0 ? -708.0 : x;
    xc = xc > 708.0 ? 708.0 : xc;
    double n = nearbyint(xc * 1.4426950408889634);
    double r = (xc - n * 0.6931471803691238) - n * 1.9082149292705877e-10;
    double p = 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    int64_t bits = ((int64_t)n + 1023) << 52;
    double scale;
    memcpy(&scale, &bits, sizeof scale);
    double y = p * scale;
    y = x > 708.0 ? INFINITY : y;
    y = x < -708.0 ? 0.0 : y;
    return x != x ? x : y;
}

/* NOTE [ Fused multiply-add in em_expf ]
 * EM_FMAF(a, b, c) is a b + c rounded once, by the FMA instruction where the target has one (x86 with FMA, every
 * aarch64), else two roundings. -ffp-contract=off keeps the compiler from fusing on its own (NOTE [ Exact
 * flags ]); em_expf asks for it explicitly because it is an approximation either way (it is not NumPy's expf),
 * and its polynomial with FMAs is both more accurate and a third faster (a 4M-float exp: 1.45 -> 1.0 ms of
 * CPU): one instruction per term instead of a dependent multiply and add. */
#if defined(__FMA__) || defined(__aarch64__)
#define EM_FMAF(a, b, c) fmaf(a, b, c)
#else
#define EM_FMAF(a, b, c) ((a) * (b) + (c))
#endif

/* exp in float32, for float32 kernels whose NumPy counterpart calls np.exp on float32 data (softmax, silu,
 * gelu's backward): the same reduction in single precision (n ln2 split in two parts, the first exact in
 * float), Cephes' degree-6 polynomial, and 2^n applied as two powers of two so that results down to the
 * smallest subnormal round once. Within 2 ulp of the correctly rounded value (NumPy's and torch's SIMD expf
 * are within 1-2 ulp too); 16 lanes per AVX-512 instruction where em_exp has 8.
 * NOTE [ No underflow for masked lanes ]
 * An argument below -110 gives 0 by the final select, so its lane computes exp(0) meanwhile: clamped to
 * -110 it made (y * s1) * s2 underflow past the subnormals, which the FPU finishes in a slow assist, and a
 * causal attention's softmax (half its scores -inf) ran 2x slower than an unmasked one (291 against 150 us
 * on 16x4x64x64). Every result is the same. */
static inline float em_expf(float x) {
    float xc = x < -110.0f ? 0.0f : x;
    xc = xc > 89.0f ? 89.0f : xc;
    float n = nearbyintf(xc * 1.44269504088896341f);
    float r = EM_FMAF(n, -0.693359375f, xc);
    r = EM_FMAF(n, 2.12194440e-4f, r);
    float p = 1.9875691500e-4f;
    p = EM_FMAF(p, r, 1.3981999507e-3f);
    p = EM_FMAF(p, r, 8.3334519073e-3f);
    p = EM_FMAF(p, r, 4.1665795894e-2f);
    p = EM_FMAF(p, r, 1.6666665459e-1f);
    p = EM_FMAF(p, r, 5.0000001201e-1f);
    float y = EM_FMAF(p, r * r, r) + 1.0f;
    int32_t ni = (int32_t)n, n1 = ni / 2, n2 = ni - n1;
    int32_t b1 = (n1 + 127) << 23, b2 = (n2 + 127) << 23;
    float s1, s2;
    memcpy(&s1, &b1, sizeof s1);
    memcpy(&s2, &b2, sizeof s2);
    y = (y * s1) * s2;
    y = x > 89.0f ? INFINITY : y;
    y = x < -110.0f ? 0.0f : y;
    return x != x ? x : y;
}

/* erf for float32 results, NOTE [ erf in single precision ] in ember/_ops/special.py: x P(x^2) / Q(x^2)
 * in double with x clamped to [-4, 4], the same polynomials as the NumPy kernel, evaluated the same way. */
static inline double em_erf_single(double x) {
    double xc = x < -4.0 ? -4.0 : (x > 4.0 ? 4.0 : x);
    double z = xc * xc;
    double p = -1.3201125609318964e-08;
    p = p * z + 4.6845742876916452e-06;
    p = p * z + 3.7960088746331194e-04;
    p = p * z + 3.8495679385557309e-03;
    p = p * z + 5.4316669532477796e-02;
    p = p * z + 1.8520269525625274e-01;
    p = p * z + 1.1283791693769376e+00;
    double q = 6.3108662385459070e-05;
    q = q * z + 1.3075503309348750e-03;
    q = q * z + 1.5461974332591057e-02;
    q = q * z + 1.1395804629479354e-01;
    q = q * z + 4.9746502904712020e-01;
    q = q * z + 1.0;
    double y = xc * p / q;
    return x != x ? x : y;
}

/* tanh for float32 results: 1 - 2 / (exp(2|x|) + 1) with its sign; near 0 its absolute error is ~1e-16,
 * which is what GELU needs (it adds tanh to 1). */
static inline double em_tanh(double x) {
    double a = x < 0 ? -x : x;
    double t = 1.0 - 2.0 / (em_exp(2.0 * a) + 1.0);
    t = x < 0 ? -t : t;
    return x != x ? x : t;
}

/* NOTE [ Vectorisable sin and cos ]
 * em_trig_core (what em_sinf and em_cosf use from 2^30 up: NOTE [ Fast sin and cos ]): sin and cos of a
 * float32 argument, computed in double and rounded once, branch-free
 * (every select a two-way `?:`, NOTE [ Vectorisable exp ]) so that a loop over them vectorises, where libm's
 * sinf is a scalar call (~60-90 ns an element here). |x| = k pi/2 + r with |r| <~ pi/4, then sin or cos of
 * r by its Taylor polynomial in double (degree 15 and 16: relative error < 1e-16 on that interval, far
 * below float32's half ulp), the quadrant k mod 4 picking which and its sign. The reduction is exact to
 * ~2^-90 absolute for every float, which the closest float to a multiple of pi/2 needs (its r is ~2^-30):
 * - |x| < 2^19 (Cody-Waite): k = nearbyint(x 2/pi), r = x - k P1 - k P2 - k P3 with pi/2 = P1 + P2 + P3,
 *   P1 and P2 of 33 bits so k P1, k P2 and x - k P1 are exact, and x - k P1 - k P2 summed with its
 *   rounding error (TwoSum) before P3's term is added.
 * - |x| >= 2^19 (Payne-Hanek on a table): |x| = m 2^e with m an integer of 24 bits; bits of 2/pi whose
 *   product with m 2^e is a multiple of 4 do not matter (mod 4 is all the quadrant needs), so the 96 bits
 *   after them, in 4 chunks of 24 bits (row e + 4 of em_2opi_chunks,
 *   written by tools/trig_table.py from 2/pi to 400 bits), give
 *   x 2/pi mod 4 = m c0 + m c1 + m c2 + m c3: each product is exact in double, the first reduced mod 4
 *   exactly, the integer part taken before the small terms are added. The table is read with a gather.
 * Both reductions are computed for every lane and one is selected. +-0 gives +-0 (sin) and 1 (cos), inf
 * and NaN give NaN. The result is the correctly rounded float except within ~1e-6 ulp of a rounding
 * boundary: within 1 ulp always (tests/compiler/test_inductor_math.py checks it against float64 NumPy).
 */
static const double em_2opi_chunks[440] = {
    0.03978872299194336, 1.2781029568031954e-08, 9.065344707000732e-16, 7.961273617653795e-22,
    0.07957744598388672, 2.5562059136063908e-08, 1.8130697884330936e-15, 7.452217762764586e-22,
    0.15915489196777344, 5.1124118272127816e-08, 3.6261404238991345e-15, 6.4341065578571475e-22,
    0.3183097839355469, 1.0224823654425563e-07, 7.252281694831216e-15, 4.397883643171292e-22,
    0.6366195678710938, 2.0449648729936598e-07, 2.937095214933759e-16, 3.254378137995797e-23,
    1.2732393741607666, 1.7057439549716946e-07, 5.874190429867518e-16, 6.508756275991595e-23,
    2.5464789867401123, 1.0273021189277642e-07, 1.1748380859735036e-15, 1.3017517600692983e-22,
    1.0929579734802246, 2.0546042378555285e-07, 2.349676171947007e-15, 2.603504025009576e-22,
    2.1859161853790283, 1.725022684695432e-07, 4.699352343894014e-15, 5.207008554890131e-22,
    0.37183260917663574, 1.0658595783752389e-07, 9.398705534820976e-15, 1.943688142108238e-22,
    0.7436652183532715, 2.131719298859025e-07, 4.586556354439948e-15, 3.8873767890874554e-22,
    1.487330675125122, 1.879252806702425e-07, 9.173112708879896e-15, 7.774753578174911e-22,
    2.9746615886688232, 1.3743199644977722e-07, 4.135371549590736e-15, 7.079178188677798e-22,
    1.9493234157562256, 3.644541379799193e-08, 8.27074394621442e-15, 5.688026904812592e-22,
    3.898646831512451, 7.289084180683858e-08, 2.3306340242597832e-15, 2.90572484195316e-22,
    3.7972936630249023, 1.4578168361367716e-07, 4.6612680485195665e-15, 5.81144968390632e-22,
    3.594587564468384, 5.314478812579182e-08, 9.32253694407208e-15, 3.1525698952696357e-22,
    3.1891751289367676, 1.0628959046243835e-07, 4.434219172942157e-15, 6.305140295410251e-22,
    2.378350257873535, 2.125791809248767e-07, 8.868439192917261e-15, 4.1399516231484774e-22,
    0.7567007541656494, 1.8673979695904563e-07, 3.526023670632518e-15, 8.279903246296955e-22,
    1.513401746749878, 1.3506101481652877e-07, 7.052048188297983e-15, 8.089477524921886e-22,
    3.026803731918335, 3.1703450531495037e-08, 1.4104097223628913e-14, 7.708625577300768e-22,
    2.05360746383667, 6.340691527384479e-08, 1.399734057908877e-14, 6.946921682058533e-22,
    0.10721492767333984, 1.268138447585443e-07, 1.3783827290008484e-14, 5.423514396445041e-22,
    0.2144300937652588, 1.52091246263808e-08, 1.3356800711847912e-14, 2.3766998252180587e-22,
    0.4288601875305176, 3.041826346361631e-08, 1.2502746708493821e-14, 4.753399650436117e-22,
    0.8577203750610352, 6.083654113808734e-08, 1.0794639548818586e-14, 1.0364703332002107e-22,
    1.7154407501220703, 1.216730964870294e-07, 7.378424382435168e-15, 2.0729411712714007e-22,
    3.4308817386627197, 4.92762808335101e-09, 5.45994049668333e-16, 4.145882847413781e-22,
    2.8617634773254395, 9.85525616670202e-09, 1.091988099336666e-15, 8.291765694827562e-22,
    1.723526954650879, 1.971051233340404e-08, 2.183977045706279e-15, 8.113202421983099e-22,
    3.447053909301758, 3.942102466680808e-08, 4.367954938445506e-15, 7.756075876294174e-22,
    2.8941078186035156, 7.884204933361616e-08, 8.735910723923958e-15, 7.041822784916324e-22,
    1.7882156372070312, 1.5768411287808703e-07, 3.2609675796788605e-15, 5.6133160972896445e-22,
    3.5764315128326416, 7.694964665461157e-08, 6.521936006390668e-15, 2.7563027220362856e-22,
    3.152863025665283, 1.5389929330922314e-07, 1.3043872012781337e-14, 5.512605444072571e-22,
    2.3057262897491455, 6.93800217277385e-08, 1.1876890157393617e-14, 2.554881415602139e-22,
    0.611452579498291, 1.387600576663317e-07, 9.54292559958523e-15, 5.109762831204278e-22,
    1.2229053974151611, 3.9101550441955624e-08, 4.874997331001402e-15, 1.7491961898655529e-22,
    2.4458107948303223, 7.820310088391125e-08, 9.749994662002805e-15, 3.498392884602085e-22,
    0.8916215896606445, 1.564062159786772e-07, 5.289134608803606e-15, 6.996786274075149e-22,
    1.7832434177398682, 7.439385285579192e-08, 1.0578270064640159e-14, 5.5232430756072955e-22,
    3.5664868354797363, 1.4878771992243855e-07, 6.945686261111261e-15, 2.576157183542567e-22,
    3.1329739093780518, 5.915686074331461e-08, 1.3891372522222521e-14, 5.152314871956113e-22,
    2.2659478187561035, 1.1831373569748393e-07, 1.3571891176275986e-14, 1.8343002713692233e-22,
    0.531895637512207, 2.3662748560582259e-07, 1.2932927637349968e-14, 3.668601047609426e-22,
    1.0637915134429932, 2.3483640632093739e-07, 1.1655000559497933e-14, 7.337202600089831e-22,
    2.1275832653045654, 2.3125424775116699e-07, 9.099147250826809e-15, 6.204075727636659e-22,
    0.25516676902770996, 2.240899306116262e-07, 3.987440633484562e-15, 3.937822487601294e-22,
    0.510333776473999, 2.0976128212168987e-07, 7.974881266969124e-15, 7.875645480073568e-22,
    1.0206677913665771, 1.8110399935267196e-07, 1.7389086657691906e-15, 7.280961487604132e-22,
    2.0413358211517334, 1.2378941960378143e-07, 3.4778181785713284e-15, 6.091593502665261e-22,
    0.0826718807220459, 9.16026010600035e-09, 6.955637204175604e-15, 3.712857532787518e-22,
    0.1653437614440918, 1.83205202120007e-08, 1.3911274408351208e-14, 7.425715570446015e-22,
    0.3306875228881836, 3.664105463485612e-08, 1.361169494853336e-14, 6.381101668349027e-22,
    0.6613750457763672, 7.328212348056695e-08, 1.3012536028897664e-14, 4.29187436902603e-22,
    1.3227500915527344, 1.4656426117198862e-07, 1.1814218189626271e-14, 1.134192655090562e-23,
    2.645500421524048, 5.470995745326945e-08, 9.417581664050538e-15, 2.268385310181124e-23,
    1.2910008430480957, 1.0941992911739362e-07, 4.624308612899072e-15, 4.536775669072041e-23,
    2.5820016860961914, 2.1883985823478724e-07, 9.248617225798145e-15, 9.073551338144082e-23,
    1.164003610610962, 1.992611515788667e-07, 4.286379736394286e-15, 1.8147107724997958e-22,
    2.328007459640503, 1.601037240561709e-07, 8.572759472788571e-15, 3.6294215449995916e-22,
    0.656015157699585, 8.178888322163402e-08, 2.934664230375139e-15, 7.258843594870163e-22,
    1.31203031539917, 1.6357776644326805e-07, 5.8693293077832255e-15, 6.047358222068301e-22,
    2.624060869216919, 8.87369537849736e-08, 1.1738659462599398e-14, 3.6243869715935987e-22,
    1.248121738433838, 1.774739217808019e-07, 9.266464209996793e-15, 7.248773943187197e-22,
    2.496243715286255, 1.1652927867089602e-07, 4.322074551824529e-15, 6.027218918702371e-22,
    0.9924874305725098, 2.3305855734179204e-07, 8.644149950682006e-15, 3.5841088697327173e-22,
    1.9849750995635986, 2.276985497928763e-07, 3.0774451861620075e-15, 7.168217739465435e-22,
    3.9699504375457764, 2.1697852048419008e-07, 6.154891219356962e-15, 5.866106006387866e-22,
    3.939901113510132, 1.9553846186681767e-07, 1.2309783285746872e-14, 3.261883045103708e-22,
    3.8798024654388428, 1.5265835884292756e-07, 1.040871185629174e-14, 6.523766090207416e-22,
    3.7596051692962646, 6.689815279514733e-08, 6.6065698444144234e-15, 4.577202707871828e-22,
    3.5192103385925293, 1.3379630559029465e-07, 1.3213140535861794e-14, 6.840764480716324e-23,
    3.0384209156036377, 2.9174046289881517e-08, 1.2215426356521585e-14, 1.3681534010142441e-22,
    2.0768418312072754, 5.834810679061775e-08, 1.0219997997841165e-14, 2.7363073068994676e-22,
    0.15368366241455078, 1.1669622779209021e-07, 6.229141280480327e-15, 5.4726151186699145e-22,
    0.30736732482910156, 2.3339245558418042e-07, 1.2458283407993601e-14, 2.4749007647968256e-22,
    0.6147348880767822, 2.2836634627765307e-07, 1.0705712100785199e-14, 4.949801529593651e-22,
    1.2294700145721436, 2.1831412766459835e-07, 7.200570333401341e-15, 1.429273586644299e-22,
    2.458940267562866, 1.982096904384889e-07, 1.9028595160067857e-16, 2.8585476781595775e-22,
    0.9178807735443115, 1.580008017754153e-07, 3.8057190320135714e-16, 5.717095356319155e-22,
    1.8357617855072021, 7.758302444926812e-08, 7.611446534356615e-16, 2.963861240095307e-22,
    3.6715235710144043, 1.5516604889853625e-07, 1.522289306871323e-15, 5.927722480190614e-22,
    3.3430473804473877, 7.191351869550999e-08, 3.0445794607755934e-15, 3.385115487838224e-22,
    2.6860947608947754, 1.4382703739101999e-07, 6.089158921551187e-15, 6.770231480547427e-22,
    1.3721897602081299, 4.923549568047747e-08, 1.2178318690135321e-14, 5.07013399342283e-22,
    2.7443795204162598, 9.847100557180966e-08, 1.0145783512101585e-14, 1.6699390191736357e-22,
    1.4887590408325195, 1.9694202535447403e-07, 6.080712309001167e-15, 3.3398780383472714e-22,
    2.977518320083618, 1.5546547160738555e-07, 1.2161424618002334e-14, 6.679756076694543e-22,
    1.9550368785858154, 7.251237832406332e-08, 1.0111995367835611e-14, 4.889183185717062e-22,
    3.910073757171631, 1.4502477085898136e-07, 6.013136867502166e-15, 1.30803689889112e-22,
    3.820147752761841, 5.163096261640021e-08, 1.2026273735004332e-14, 2.61607379778224e-22,
    3.6402955055236816, 1.0326193944365514e-07, 9.84169275480666e-15, 5.23214759556448e-22,
    3.2805910110473633, 2.06523893098165e-07, 5.472531641444265e-15, 1.993965718585956e-22,
    2.5611822605133057, 1.7462920709476748e-07, 1.094506328288853e-14, 3.987931437171912e-22,
    1.1223647594451904, 1.1083984929882718e-07, 7.679271850575056e-15, 7.975863379214804e-22,
    2.244729518890381, 2.2167971280850907e-07, 1.147689832981056e-15, 7.481397285886604e-22,
    0.4894592761993408, 2.0494084651545563e-07, 2.2953805129950593e-15, 6.492465099230205e-22,
    0.9789187908172607, 1.7146311392934876e-07, 4.590761873023066e-15, 4.514600725917406e-22,
    1.9578378200531006, 1.0450764875713503e-07, 9.181524593079079e-15, 5.588719792918088e-23,
    3.915675640106201, 2.0901531172512477e-07, 4.152194470956154e-15, 1.1177439585836176e-22,
    3.8313515186309814, 1.7961204434868705e-07, 8.304388941912308e-15, 2.2354884220382145e-22,
    3.662703275680542, 1.2080552380666632e-07, 2.397923168622612e-15, 4.470977348947408e-22,
    3.325406789779663, 3.19246851177013e-09, 4.7958471842781715e-15, 4.716257302227926e-23,
    2.650813579559326, 6.38493702354026e-09, 9.591694368556343e-15, 9.432519653165645e-23,
    1.3016271591186523, 1.2769888257935236e-08, 4.972534021910682e-15, 1.8865044355041083e-22,
    2.6032543182373047, 2.553977651587047e-08, 9.945068043821365e-15, 3.773009375879196e-22,
    1.2065086364746094, 5.107956724259566e-08, 5.6792813724407254e-15, 7.546019256629371e-22,
    2.4130172729492188, 1.0215913448519132e-07, 1.1358563591914398e-14, 6.621709545586719e-22,
};
#define EM_PIO2_1 1.5707963267341256
#define EM_PIO2_2 6.077100506303966e-11
#define EM_PIO2_3 2.0222662487959506e-21

static inline double em_trig_core(float x, int cosine) {
    double ax = fabs((double)x);
    double small = ax < 524288.0 ? ax : 0.0;
    double k = nearbyint(small * 0.63661977236758134308);
    double r1 = small - k * EM_PIO2_1;
    double t = -(k * EM_PIO2_2);
    double r2 = r1 + t;
    double bt = r2 - r1;
    double err = (r1 - (r2 - bt)) + (t - bt);
    double r = r2 + (err - k * EM_PIO2_3);
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    int32_t row = (int32_t)((bits >> 23) & 0xff) - 146;
    row = row < 0 ? 0 : row;
    row = row > 109 ? 109 : row;
    row = row * 4;
    double m = (double)(int32_t)((bits & 0x7fffff) | 0x800000);
    double t0 = m * em_2opi_chunks[row + 0];
    t0 = t0 - 4.0 * floor(t0 * 0.25);
    double s = t0 + m * em_2opi_chunks[row + 1];
    double kh = nearbyint(s);
    double f = (s - kh) + m * em_2opi_chunks[row + 2];
    f = f + m * em_2opi_chunks[row + 3];
    int big = ax >= 524288.0;
    r = big ? f * 1.5707963267948966 : r;
    k = big ? kh : k;
    double q = k - 4.0 * floor(k * 0.25);
    double z = r * r;
    double ps = 1.0 / 1307674368000.0;
    ps = ps * z - 1.0 / 6227020800.0;
    ps = ps * z + 1.0 / 39916800.0;
    ps = ps * z - 1.0 / 362880.0;
    ps = ps * z + 1.0 / 5040.0;
    ps = ps * z - 1.0 / 120.0;
    ps = ps * z + 1.0 / 6.0;
    double sn = r - (r * z) * ps;
    double pc = 1.0 / 20922789888000.0;
    pc = pc * z - 1.0 / 87178291200.0;
    pc = pc * z + 1.0 / 479001600.0;
    pc = pc * z - 1.0 / 3628800.0;
    pc = pc * z + 1.0 / 40320.0;
    pc = pc * z - 1.0 / 720.0;
    pc = pc * z + 1.0 / 24.0;
    pc = pc * z - 0.5;
    double cs = 1.0 + z * pc;
    q = cosine ? q + 1.0 : q;
    q = q >= 4.0 ? q - 4.0 : q;
    double odd = q - 2.0 * floor(q * 0.5);
    double v = odd != 0.0 ? cs : sn;
    v = q >= 2.0 ? -v : v;
    v = (!cosine && x < 0) ? -v : v;
    v = (!cosine && ax == 0.0) ? (double)x : v;
    v = ax == INFINITY ? NAN : v;
    return x != x ? (double)x : v;
}

/* NOTE [ Fast sin and cos ]
 * em_trig_core computes both reductions for every lane (the table gathers of the large one), 2.1 ns an
 * element here against NumPy's float32 SIMD sin at 0.5 ns. em_trig_fast is the path for |x| < 2^30, about
 * 0.34 ns an element (16 lanes a vector: the double computations are few): in double, k = x/pi rounded to
 * an integer (by adding 1.5 2^52, whose last mantissa bit is then k's parity), r = x - k pi by two fused
 * multiply-adds with pi as a double-double (the first is exact to 2^-53 |r| for any k < 2^51, the second
 * adds the rest; for float arguments below 2^30, |r| >= ~1e-9 and the neglected pi term is < 1e-33 k),
 * then sin(r) on |r| <= pi/2 by its Taylor polynomial to r^17 (relative error < 5e-14), its sign flipped
 * for odd k. cos is the same with x = (k + 1/2) pi + r: cos x = -(-1)^k sin r. Rounded to float, the result
 * is the correctly rounded one but within ~1e-6 ulp of a rounding boundary (checked against float64 NumPy on
 * every third float below 2^24 and every float in [2^24, 2^40): 45 of 1.7e9 differ, by 1 ulp).
 * Only with a hardware fma (FP_FAST_FMA): elsewhere fma is a library call, and em_trig_core is the path.
 *
 * A loop calls em_sinf_fast/em_cosf_fast (valid below EM_TRIG_FAST_MAX) and ORs em_trig_big of every
 * argument into a flag; a generated kernel whose flag is set recomputes its range with em_sinf/em_cosf,
 * which select em_trig_fast below EM_TRIG_FAST_MAX and em_trig_core above (both computed: slow, but only
 * for ranges holding a huge argument), so an element's value never depends on its neighbours or on the
 * thread count (NOTE [ Fast trig with a rerun ] in ember/_inductor/codegen_c.py). */
#define EM_TRIG_FAST_MAX 1073741824.0f
#ifdef FP_FAST_FMA
static inline float em_trig_fast(float x, int cosine) {
    double xd = (double)x;
    double t = xd * 0.3183098861837907;
    t = cosine ? t - 0.5 : t;
    double kk = t + 6755399441055744.0;
    double k = kk - 6755399441055744.0;
    double h = cosine ? k + 0.5 : k;
    double r = fma(-h, 3.141592653589793, xd);
    r = fma(-h, 1.2246467991473532e-16, r);
    double z = r * r;
    double z2 = z * z, z4 = z2 * z2;
    double a0 = fma(1.0 / 120.0, z, -1.0 / 6.0), a1 = fma(1.0 / 362880.0, z, -1.0 / 5040.0);
    double a2 = fma(1.0 / 6227020800.0, z, -1.0 / 39916800.0);
    double a3 = fma(1.0 / 355687428096000.0, z, -1.0 / 1307674368000.0);
    double p = fma(fma(a3, z2, a2), z4, fma(a1, z2, a0));
    double s = fma(r * z, p, r);
    uint64_t kb, sb;
    memcpy(&kb, &kk, sizeof kb);
    memcpy(&sb, &s, sizeof sb);
    sb ^= (kb << 63) ^ (cosine ? (uint64_t)1 << 63 : 0);
    memcpy(&s, &sb, sizeof s);
    s = (!cosine && xd == 0.0) ? xd : s;
    return (float)s;
}
#else
static inline float em_trig_fast(float x, int cosine) { return (float)em_trig_core(x, cosine); }
#endif
static inline int em_trig_big(float x) { return fabsf(x) >= EM_TRIG_FAST_MAX; }
static inline float em_sinf_fast(float x) { return em_trig_fast(x, 0); }
static inline float em_cosf_fast(float x) { return em_trig_fast(x, 1); }
static inline float em_sinf(float x) {
    float f = em_trig_fast(x, 0), c = (float)em_trig_core(x, 0);
    return em_trig_big(x) ? c : f;
}
static inline float em_cosf(float x) {
    float f = em_trig_fast(x, 1), c = (float)em_trig_core(x, 1);
    return em_trig_big(x) ? c : f;
}

/* NOTE [ OpenMP in kernels ]
 * Every parallel loop takes its thread count from Python (`nt`, from ember.set_num_threads and the size:
 * `threads_for` in __init__.py) and splits rows statically, so a result never depends on the thread count:
 * each row or element is computed by one thread with the same code. */
#ifdef _OPENMP
#define EM_PARALLEL_FOR(nt) _Pragma("omp parallel for schedule(static) num_threads(nt) if(nt > 1)")
/* the same, with a reduction of `var` by `op` (an integer or-reduction of error flags, where the order of the
 * parts cannot matter) */
#define EM_PRAGMA_(text) _Pragma(#text)
#define EM_PARALLEL_FOR_REDUCE(nt, op, var) \
    EM_PRAGMA_(omp parallel for schedule(static) num_threads(nt) if(nt > 1) reduction(op:var))
#else
#define EM_PARALLEL_FOR(nt)
#define EM_PARALLEL_FOR_REDUCE(nt, op, var)
#endif

/* ---- convolution, pooling and batch_norm kernels (R1): loops on ember's pool ------------------------------
 * NOTE [ Kernels on ember's pool ]
 * Where another library loaded libgomp first (torch, in the benchmarks or beside a user's comparison), the
 * OpenMP loops run on its team, configured to spin after every loop (NOTE [ Passive OpenMP threads ] in
 * __init__.py), so kernels below SHARED_PARALLEL_SIZE elements stay on one thread: the CIFAR CNN's
 * batch_norm and max-pool tensors (1-2M floats) ran on one core at 2 threads, and the convolutions' OpenMP
 * workers spun on the core the compiled step's generated kernels wanted. A file that defines EM_KERNEL_POOL
 * before including this header (conv.c, pool.c, norm.c) gets `em_for`, which runs a loop on ember's own pool
 * (threadpool.c, NOTE [ A pool of our own ]; the one the generated kernels use), given to the library when
 * it is loaded (`em_set_pool`, ember/_native/__init__.py); without it the loop runs on the calling thread.
 * A loop's iterations are independent and each is computed by one thread with the same code, so results do
 * not depend on the thread count. */
#ifdef EM_KERNEL_POOL
typedef void (*em_body)(void *ctx, idx lo, idx hi);
typedef void (*em_pool_fn)(em_body body, void *ctx, idx n, int nt, idx chunk);
static em_pool_fn em_pool;
void em_set_pool(void *f) { em_pool = (em_pool_fn)f; }

/* body(ctx, lo, hi) over [0, n): on nt threads of ember's pool (chunks of `chunk` iterations, 0: about four
 * per thread), or at once on the calling thread. */
static inline void em_for(em_body body, void *ctx, idx n, int nt, idx chunk) {
    if (nt > 1 && n > 1 && em_pool)
        em_pool(body, ctx, n, nt, chunk);
    else if (n > 0)
        body(ctx, 0, n);
}
#endif

#endif
