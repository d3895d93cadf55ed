"""``scipy.ndimage.map_coordinates`` against JAX 0.10.2 (recorded by hand) for both orders
and every boundary mode, at coordinates inside, on and outside the grid."""

import numpy as np
import pytest

import quabla
import quabla.numpy as jnp
from quabla.scipy.ndimage import map_coordinates

from conftest import assert_close

IMG = np.arange(20.0).reshape(4, 5) ** 1.5
CI = np.array([-1.5, -0.5, 0.0, 0.5, 1.25, 2.5, 3.0, 3.7, 4.5, 6.2])
CJ = np.array([0.0, -2.3, 4.5, 1.5, 2.75, -0.5, 5.5, 3.2, 0.25, 7.0])

# JAX's values with cval=-1 (XLA contracts some products into FMAs: last-bit differences).
JAX = {
    (0, 'constant'): [-1.0, -1.0, -1.0, 18.520259177452132, 22.627416997969522, -1.0, -1.0, -1.0, -1.0, -1.0],
    (0, 'nearest'): [0.0, 0.0, 8.0, 18.520259177452132, 22.627416997969522, 58.09475019311125, 82.8190799272728, 76.36753236814714, 58.09475019311125, 82.8190799272728],
    (0, 'wrap'): [31.622776601683793, 76.36753236814714, 0.0, 18.520259177452132, 22.627416997969522, 82.8190799272728, 64.0, 5.196152422706632, 11.180339887498949, 41.569219381653056],
    (0, 'mirror'): [31.622776601683793, 18.520259177452132, 5.196152422706632, 18.520259177452132, 22.627416997969522, 64.0, 70.09279563550022, 46.87216658103186, 11.180339887498949, 1.0],
    (0, 'reflect'): [11.180339887498949, 1.0, 8.0, 18.520259177452132, 22.627416997969522, 58.09475019311125, 76.36753236814714, 76.36753236814714, 31.622776601683793, 18.520259177452132],
    (1, 'constant'): [-1.0, -1.0, 3.5, 9.261406189724347, 27.587078102426922, 21.929381698698762, -1.0, 22.597352563991667, -1.0, -1.0],
    (1, 'nearest'): [0.0, 0.0, 8.0, 9.261406189724347, 27.587078102426922, 44.858763397397524, 82.8190799272728, 77.65784187997227, 59.57106264483344, 82.8190799272728],
    (1, 'wrap'): [44.858763397397524, 39.485473090835775, 4.0, 9.261406189724347, 27.587078102426922, 56.22995253422575, 61.047375096555626, 27.327197920707384, 6.15474476489949, 47.273934632422495],
    (1, 'mirror'): [21.40155824459137, 11.645575618870835, 6.598076211353316, 9.261406189724347, 27.587078102426922, 47.55009987217611, 73.23016400182368, 56.87941432744645, 22.448645077269585, 3.7393876913398163],
    (1, 'reflect'): [5.5901699437494745, 1.5485281374238569, 8.0, 9.261406189724347, 27.587078102426922, 44.858763397397524, 79.59330614770997, 77.65784187997227, 46.204431634786815, 15.38189276691094],
}


@pytest.mark.parametrize("order,mode", list(JAX))
def test_orders_and_modes_match_jax(order, mode):
    out = map_coordinates(jnp.asarray(IMG), [jnp.asarray(CI), jnp.asarray(CJ)], order,
                          mode=mode, cval=-1.0)
    assert_close(out, JAX[(order, mode)], rtol=1e-14, atol=1e-13)


def test_integer_inputs_round_and_gradients():
    out = map_coordinates(jnp.asarray(np.arange(10, dtype=np.int32)),
                          [jnp.asarray([0.5, 1.5, 2.25, 8.6])], 1)
    assert out.dtype == np.int32 and out.tolist() == [1, 2, 2, 9]
    # d/dc of linear interpolation along axis 0 at (c, j): the difference of the two rows.
    g = quabla.grad(lambda c: jnp.sum(map_coordinates(
        jnp.asarray(IMG), [c, jnp.asarray(CJ[:3])], 1, mode="nearest")))(jnp.asarray(CI[:3]))
    assert_close(g, [0.0, 0.0, 19.0], rtol=1e-14)
    gi = quabla.grad(lambda im: map_coordinates(im, [jnp.asarray([1.25]), jnp.asarray([2.5])],
                                                1)[0])(jnp.asarray(IMG))
    want = np.zeros_like(IMG)
    want[1, 2], want[1, 3], want[2, 2], want[2, 3] = 0.375, 0.375, 0.125, 0.125
    assert_close(gi, want, rtol=1e-15)


def test_errors():
    with pytest.raises(ValueError, match="length input.ndim"):
        map_coordinates(jnp.ones((2, 2)), [jnp.zeros(3)], 1)
    with pytest.raises(NotImplementedError, match="mode"):
        map_coordinates(jnp.ones(3), [jnp.zeros(3)], 1, mode="grid-mirror")
    with pytest.raises(NotImplementedError, match="order"):
        map_coordinates(jnp.ones(3), [jnp.zeros(3)], 3)
