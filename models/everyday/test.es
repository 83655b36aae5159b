Buenos días, ¿en qué puedo ayudarle?
¿Cómo te llamas?
Me llamo Carmen, ¿y tú?
Te presento a mi amigo Jorge.
Mucho gusto.
¿Cómo está su familia?
Todos bien, gracias por preguntar.
¡Bienvenidos a nuestra casa!
Adiós, que te vaya bien.
Hasta pronto.
Perdón, no te había visto.
Disculpe, ¿sabe qué hora es?
No hablo muy bien español.
¿Qué significa esta palabra?
¿Puede repetirlo, por favor?
Gracias, muy amable.
¡Feliz Navidad y próspero año nuevo!
¡Buen provecho!
¡Salud!
Mi hijo mayor estudia en Madrid.
Mi madre tiene sesenta años.
Tengo un hermano y dos hermanas.
Mis abuelos viven en el campo.
Mi mujer es enfermera.
Nuestro hijo nació en marzo.
Los domingos comemos todos juntos.
Mi hermana mayor tiene tres hijos.
Mi padre me enseñó a conducir.
La niña se parece mucho a su madre.
Mi tío trabaja en el puerto.
Estamos esperando un bebé.
Mis padres se conocieron en un baile.
Mi hijo pequeño tiene miedo de la oscuridad.
Voy a recoger a los niños al colegio.
¿Cuánto vale este bolso?
Quería medio kilo de queso.
¿Tienen estos pantalones en negro?
¿Aceptan tarjetas de crédito?
No tengo cambio.
¿Me lo puedo probar?
Es un poco caro, pero me gusta.
¿Hay algo más barato?
No necesito bolsa, gracias.
¿A qué hora abre la panadería?
Compro la fruta en el mercado del barrio.
Póngame una barra de pan.
Deme tres naranjas y un melón.
¿Cuánto le debo?
Quédese con el cambio.
Este vestido no me queda bien.
Quiero cambiar estos zapatos por otra talla.
Busco algo para mi padre.
La librería está junto a la farmacia.
Las tiendas cierran pronto los sábados.
Nos hemos quedado sin café.
Hay que comprar arroz, aceite y patatas.
¿Dónde se coge el autobús para la playa?
¿Cuándo sale el último tren?
Un billete de ida a Sevilla, por favor.
¿Cuánto dura el viaje?
Han cancelado nuestro vuelo.
No encuentro mi equipaje.
¿Conoce algún hotel barato?
He reservado una habitación para dos noches.
¿A qué hora se sirve el desayuno?
Quisiera una habitación con vistas al mar.
La habitación no tiene agua caliente.
El taxi tardará diez minutos.
Al aeropuerto, por favor.
¿Cuánto cuesta un taxi hasta el centro?
Este verano vamos a ir a Portugal.
Pasamos una semana en la montaña.
Prefiero viajar en avión.
Mi pasaporte caduca el mes que viene.
¿Dónde está la oficina de turismo?
La catedral se puede visitar por la mañana.
¿Se puede alquilar un coche en el aeropuerto?
El hotel está a dos pasos de la playa.
Me encanta probar la comida de otros países.
¿Este autobús para en la estación?
Perdone, ¿está ocupado este sitio?
¿Va a llover mañana?
Hoy hace mucho frío.
Ha salido el sol después de la tormenta.
Está lloviendo a cántaros.
Esta noche va a helar.
En mi ciudad casi nunca nieva.
Hace un tiempo horrible.
No olvides la crema para el sol.
Dicen que mañana subirán las temperaturas.
En invierno anochece muy pronto.
El viento ha tirado un árbol en la calle.
Hace demasiado calor para salir.
Me he mojado porque no llevaba paraguas.
Esta primavera ha llovido poco.
Hace fresco por las noches.
¿Dónde trabajas?
Soy camarero en un restaurante.
Trabajo en un banco desde hace diez años.
La reunión se ha cancelado.
Mi jefa me ha pedido que me quede hasta tarde.
Los viernes trabajo solo por la mañana.
Salgo del trabajo a las cinco.
He encontrado un trabajo nuevo.
Tengo que preparar una presentación para mañana.
¿Has leído mi correo?
El tren iba tan lleno que llegué tarde al trabajo.
Me llevo muy bien con mis compañeros.
Voy a pedir una semana de vacaciones.
Han despedido a tres personas de mi oficina.
Por fin hemos terminado el trabajo.
No trabajo los fines de semana.
Gano poco, pero me gusta lo que hago.
¿Comemos juntos mañana?
¿Qué quieres beber?
Un vaso de agua, por favor.
¿Tienen menú del día?
Una mesa para dos, por favor.
¿Nos cobra, por favor?
¿Cuál es la especialidad de la casa?
No como pescado.
El café está frío.
La comida estaba muy buena.
¿Me pasas el pan, por favor?
Me muero de hambre.
Tengo mucha sed.
¿Qué hay de postre?
Por la mañana solo tomo un café.
Hoy comemos lentejas.
¿Te sirvo más ensalada?
No bebas agua del río.
Soy alérgica al marisco.
Me encantan las patatas fritas.
Voy a hacer una tortilla para cenar.
El pescado está un poco salado.
Me duelen las muelas.
Creo que tengo gripe.
Tengo que pedir cita con el médico.
¿Dónde hay una farmacia de guardia?
Me he roto el brazo.
Tómese una pastilla antes de dormir.
El dentista me ha sacado una muela.
La niña tiene fiebre y no quiere comer.
¿Tiene algo para la tos?
Ha habido un accidente, llamen a la policía.
Ya estoy mejor, gracias.
Tiene que quedarse en la cama dos días.
Me mareo en el coche.
Voy al gimnasio todos los días.
Mi abuelo dejó de fumar hace años.
¿Tienes hora?
Es la una y cuarto.
Son las ocho de la mañana.
Quedamos a las seis delante del cine.
Mañana es viernes.
¿A cuántos estamos hoy?
Nací el tres de octubre.
Vuelvo en cinco minutos.
Llevamos media hora en la cola.
El programa empieza a las diez menos diez.
La semana pasada estuve enfermo.
Pasado mañana es fiesta.
Nunca llego tarde.
¿Desde cuándo estudias inglés?
Trabajo aquí desde enero.
No tengo tiempo para nada.
Corre, que empieza la película.
¿Por dónde se va a la estación?
Siga recto hasta el segundo semáforo.
Está a unos cien metros.
El hospital está al lado del parque.
Cruce el puente y gire a la izquierda.
Tome la primera calle a la derecha.
La farmacia está en la esquina.
¿Se puede ir andando?
Es mejor coger el metro.
Creo que nos hemos equivocado de calle.
¿Hay un supermercado cerca?
El cine está entre el banco y la panadería.
Baje por esta calle hasta el río.
La salida está detrás de usted.
El baño está arriba, a la derecha.
¿Qué planes tienes para el fin de semana?
¿Vamos a dar un paseo?
Me gusta escuchar música mientras cocino.
Los martes voy a clase de baile.
Odio levantarme temprano.
Me gusta más el verano que el invierno.
¿Te vienes a cenar con nosotros?
Estoy agotado después del viaje.
¿Me echas una mano con la mudanza?
Por supuesto, cuenta conmigo.
No importa.
Estoy de acuerdo contigo.
No lo sé.
¿Me prestas tu coche?
Me he quedado sin batería.
¿Me das tu número?
Te llamo luego.
Avísame cuando estés en casa.
No tengo cobertura aquí.
La nevera hace un ruido raro.
Hoy me toca planchar.
¿Has regado las plantas?
Vivimos en un piso pequeño en el centro.
Buscamos un piso con terraza.
El vecino de arriba tiene un piano.
Nos hemos comprado una casa en las afueras.
Abre la puerta, que hace calor.
¿Dónde has puesto las gafas?
El mando está debajo del sofá.
No dejes la luz encendida.
Me voy a lavar los dientes.
Hay que sacar al perro.
Nuestro gato se ha escapado.
Llevo dos años estudiando alemán.
Mi hija quiere ser veterinaria.
El curso termina en junio.
Mañana tengo un examen de historia.
No he hecho los deberes.
Quiero aprender a cocinar.
¿Qué estudias?
Estudio derecho en Salamanca.
¡Qué sorpresa verte aquí!
¡Qué lástima!
¡Felicidades por el bebé!
Me alegro de verte.
Estoy nervioso por la entrevista.
Tranquilo, no es nada grave.
Os echamos de menos.
Estoy cansado de este ruido.
Cuidado, el suelo está mojado.
Un momento, ahora vuelvo.
¿Puedo pasar?
¿Le importa cerrar la puerta?
¿Nos hace una foto, por favor?
No se puede fumar en el restaurante.
Se me ha pinchado una rueda.
Hay un atasco en la entrada de la ciudad.
¿Dónde puedo aparcar?
Deja el coche en el garaje.
El autobús es más barato que el tren.
¿Cuánto cuesta el billete de metro?
Bájate en la próxima parada.
Tienes que cambiar de línea en la plaza.
El tren llega con retraso.
Voy andando al trabajo.
El avión despega a las seis.
¿Por qué puerta embarcamos?
Llevo dos maletas.
¿A qué hora abre el banco?
Quiero sacar dinero.
Me han robado el bolso.
El cajero se ha tragado mi tarjeta.
Tengo que recoger un paquete en correos.
¿Cuánto tarda en llegar una carta a Alemania?
Quiero poner una reclamación.
Nadie coge el teléfono.
Escriba su nombre aquí.
Necesito una fotocopia de su carné.
¿Dónde vive usted?
Vivo en el tercer piso.
¿Me deletrea su nombre?
Te mando la dirección por correo.
Subimos por la escalera porque el ascensor está roto.
Vamos a celebrar el cumpleaños de Marta.
¿Vas a ir a la fiesta del viernes?
Hemos invitado a veinte personas.
Yo llevo las bebidas.
Baja un poco la música, por favor.
Nos acostamos muy tarde.
La obra de teatro fue muy divertida.
He sacado las entradas por internet.
¿A qué hora empieza el partido?
Perdimos el partido por un gol.
Salgo a correr todas las mañanas.
Los niños quieren ir a la piscina.
Mi hijo está aprendiendo a montar en bicicleta.
El domingo hicimos una ruta por el bosque.
Desde arriba se ve toda la ciudad.
Le he regalado flores a mi madre.
Esta noche cocino yo.
¿Me ayudas a poner la mesa?
Esta salsa pica mucho.
Hay que meter la tarta en la nevera.
Pela las patatas y córtalas en rodajas.
No queda leche.
Trae también unos huevos.
Las fresas están muy dulces.
Este jersey es de lana.
La chaqueta me queda grande.
¿Lo tiene en rojo?
Prefiero el verde.
Esta tienda tiene muy buenos precios.
El centro comercial está lleno de gente.
Hoy hay ofertas en la fruta.
¿Puede enviarlo a mi casa?
Mi abuela cumple cien años en diciembre.
Mi sobrino ya habla un poco.
Mis suegros vienen a cenar esta noche.
Mi amiga Ana vive en el mismo barrio que yo.
Nos conocimos en un viaje a Roma.
Mis padres llevan cuarenta años casados.
Mis hijos se han ido de casa.
Hace años que no hablo con él.
Hoy no puedo quedar, estoy muy liado.
A lo mejor el mes que viene.
¡Qué buena idea!
Déjame pensarlo.
¿Estás bien? Te veo cansado.
Hoy estoy muy contento.
El médico dice que tengo que comer menos sal.
En primavera estornudo mucho.
Me he quemado la mano con la sartén.
Esta noche no he podido dormir.
Lleva tres días sin parar de llover.
Ojalá haga buen tiempo en la boda.
En agosto hace muchísimo calor en el sur.
El suelo está helado, ten cuidado.
El otoño es precioso en el norte.
¿Sabes qué tiempo va a hacer el domingo?
